import { randomUUID } from "node:crypto";
import type { Pool, PoolClient } from "../sql.ts";
import { toDate } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import { COUNT_ACCEPTED, COUNT_MOVED } from "./message-stats.ts";
import type { SecretSealer } from "../../../capabilities/sending-setup/key-sealing.ts";
import type { MessageStatusName } from "../../../capabilities/messages/statuses.ts";
import { BEFORE_HANDOFF, statusesBefore } from "../../../capabilities/messages/statuses.ts";
import type {
  HandoffCandidate,
  HandoffClaim,
  KeyedMessage,
  MessageAttachment,
  MessageStore,
  Move,
  MoveResult,
  NewCampaignCopy,
  NewMessage,
  StoredMessage,
  UnstartedMessage,
} from "../../../capabilities/messages/ports.ts";

/** The port, for the callers that named it here (the Temporal dispatcher). */
export type { MessageStore };

/**
 * The MessageStore port on PostgreSQL: accepting, moving between statuses,
 * and recording each move's event and webhook event in the same
 * transaction, so the message log, its events and the webhook outbox never
 * disagree.
 *
 * Every statement on a message is scoped by company_id (the tenant rule):
 * the workflow carries the company id with the message id.
 */

type Db = () => Promise<Pool>;

interface MessageRow {
  id: string;
  company_id: string;
  status: MessageStatusName;
  recipient: string;
  recipient_name: string | null;
  recipient_domain: string;
  sender_id: string | null;
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  subject: string;
  html: string | null;
  text_body: string | null;
  provider: string | null;
  provider_message_id: string | null;
  error_code: string | null;
  created_at: string | Date;
  /** The service's own mail: html and text_body are sealed. */
  system: boolean;
  /** Read by the idempotency-key lookups only. */
  request_fingerprint?: Buffer | null;
  campaign_id?: string | null;
  contact_id?: string | null;
  extra_headers?: Record<string, string> | null;
}

function fromRow(row: MessageRow, open: (sealed: string | null) => string | null): StoredMessage {
  return {
    id: row.id,
    companyId: row.company_id,
    status: row.status,
    recipient: row.recipient,
    recipientName: row.recipient_name,
    recipientDomain: row.recipient_domain,
    senderId: row.sender_id,
    fromEmail: row.from_email,
    fromName: row.from_name,
    replyTo: row.reply_to,
    subject: row.subject,
    html: open(row.html),
    text: open(row.text_body),
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    errorCode: row.error_code,
    createdAt: toDate(row.created_at),
    ...(row.campaign_id ? { campaign: { campaignId: row.campaign_id, contactId: row.contact_id ?? "" } } : {}),
    ...(row.extra_headers ? { headers: row.extra_headers } : {}),
  };
}

/** Where a system message's body is sealed to: this message of this company only. */
export function messageBodySealContext(companyId: string, messageId: string): string {
  return `message-body:${companyId}:${messageId}`;
}

/**
 * The files of a message just inserted, one statement each: a single bytea
 * parameter travels in binary (an array of them would be sent as hex text,
 * twice the size).
 */
async function insertAttachments(client: PoolClient, companyId: string, messageId: string, attachments: readonly MessageAttachment[]): Promise<void> {
  for (const [position, attachment] of attachments.entries()) {
    await client.query({
      name: "message_attachment_insert",
      text: `insert into message_attachment (message_id, company_id, position, filename, content_type, content_id, size, content)
             values ($1, $2, $3, $4, $5, $6, $7, $8)`,
      values: [
        messageId,
        companyId,
        position,
        attachment.filename,
        attachment.contentType,
        attachment.contentId ?? null,
        attachment.content.length,
        Buffer.from(attachment.content.buffer, attachment.content.byteOffset, attachment.content.length),
      ],
    });
  }
}

export function recipientDomainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}

const INSERT_QUEUED = `insert into message (id, company_id, api_key_id, idempotency_key, recipient, recipient_name,
           recipient_domain, sender_id, from_email, from_name, reply_to, subject, html, text_body, template_id, tags, status,
           request_fingerprint, system)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'queued', $17, $18)
         on conflict (company_id, idempotency_key) do nothing
         returning *`;

/** The acceptance, counted in the statistics by the same statement (a replay inserts nothing and counts nothing). */
const INSERT_QUEUED_SQL = `with inserted as (${INSERT_QUEUED})${COUNT_ACCEPTED}
         select * from inserted`;

/** The parameters of the acceptance statement; `html` and `text` as stored (sealed for system mail). */
export function insertQueuedValues(message: NewMessage, html: string | null, text: string | null): unknown[] {
  return [
    message.id,
    message.companyId,
    message.apiKeyId,
    message.idempotencyKey,
    message.recipient,
    message.recipientName,
    recipientDomainOf(message.recipient),
    message.senderId,
    message.fromEmail,
    message.fromName,
    message.replyTo,
    message.subject,
    html,
    text,
    message.templateId,
    JSON.stringify(message.tags),
    message.requestFingerprint ? Buffer.from(message.requestFingerprint) : null,
    message.system === true,
  ];
}

export interface MessageStoreOptions {
  /**
   * Seals the bodies of the service's own mail (NewMessage.system): their
   * one-time links are then unreadable in the database, its backups and
   * every read; only the handoff opens them. Without it, system mail is refused.
   */
  readonly sealer?: SecretSealer;
}

export class PostgresMessageStore implements MessageStore {
  readonly #db: Db;
  readonly #sealer: SecretSealer | undefined;

  constructor(db: Db, options: MessageStoreOptions = {}) {
    this.#db = db;
    this.#sealer = options.sealer;
  }

  #fromRow(row: MessageRow): StoredMessage {
    if (!row.system) return fromRow(row, (value) => value);
    const sealer = this.#requireSealer();
    const context = messageBodySealContext(row.company_id, row.id);
    return fromRow(row, (sealed) => (sealed === null ? null : sealer.unseal(sealed, context)));
  }

  #keyedFromRow(row: MessageRow): KeyedMessage {
    return { ...this.#fromRow(row), requestFingerprint: row.request_fingerprint ? new Uint8Array(row.request_fingerprint) : null };
  }

  #requireSealer(): SecretSealer {
    if (!this.#sealer) throw new Error("the service's own mail needs a sealer (DATA_ENCRYPTION_KEY)");
    return this.#sealer;
  }

  /** The body as stored: sealed for the service's own mail. */
  #storedBody(message: NewMessage, value: string | null): string | null {
    if (!message.system || value === null) return value;
    return this.#requireSealer().seal(value, messageBodySealContext(message.companyId, message.id));
  }

  /**
   * Records an accepted message as `queued`. With an idempotency key, the
   * (company, key) unique index makes concurrent identical sends create one
   * row: the losers get the existing message back (`created: false`).
   */
  async insertQueued(message: NewMessage): Promise<{ message: KeyedMessage; created: boolean }> {
    const pool = await this.#db();
    const attachments = message.attachments ?? [];
    // With files, the message and its files are one transaction; without, one statement as before.
    const inserted = attachments.length === 0 ? await this.#insertMessage(pool, message) : await inTransaction(pool, async (client) => {
      const result = await this.#insertMessage(client, message);
      if (result.rows[0]) await insertAttachments(client, message.companyId, message.id, attachments);
      return result;
    });
    const row = inserted.rows[0];
    if (row) return { message: this.#keyedFromRow(row), created: true };
    const existing = await this.findByIdempotencyKey(message.companyId, message.idempotencyKey ?? "");
    if (!existing) throw new Error("idempotency conflict without an existing message");
    return { message: existing, created: false };
  }

  async insertCampaignCopy(copy: NewCampaignCopy): Promise<void> {
    const pool = await this.#db();
    await pool.query({
      name: "message_insert_campaign_copy",
      text: `insert into message (id, company_id, recipient, recipient_domain, sender_id, from_email, from_name, reply_to, subject, html, text_body,
               template_id, status, campaign_id, contact_id, extra_headers, workflow_started_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'queued', $13, $14, $15::jsonb, now())
             on conflict (id) do nothing`,
      values: [
        copy.id,
        copy.companyId,
        copy.recipient,
        recipientDomainOf(copy.recipient),
        copy.senderId,
        copy.fromEmail,
        copy.fromName,
        copy.replyTo,
        copy.subject,
        copy.html,
        copy.text,
        copy.templateId,
        copy.campaign.campaignId,
        copy.campaign.contactId,
        Object.keys(copy.headers).length > 0 ? JSON.stringify(copy.headers) : null,
      ],
    });
  }

  #insertMessage(db: Pool | PoolClient, message: NewMessage) {
    return db.query<MessageRow>({
      // Named: each pooled connection parses and plans it once (it runs for every accepted send).
      name: "message_insert_queued",
      text: INSERT_QUEUED_SQL,
      values: insertQueuedValues(message, this.#storedBody(message, message.html), this.#storedBody(message, message.text)),
    });
  }

  async attachments(companyId: string, messageId: string): Promise<MessageAttachment[]> {
    const pool = await this.#db();
    const { rows } = await pool.query<{ filename: string; content_type: string; content_id: string | null; content: Buffer }>({
      text: `select filename, content_type, content_id, content from message_attachment
              where company_id = $1 and message_id = $2 order by position`,
      values: [companyId, messageId],
    });
    return rows.map((row) => ({
      filename: row.filename,
      contentType: row.content_type,
      content: row.content,
      ...(row.content_id !== null ? { contentId: row.content_id } : {}),
    }));
  }

  async findByIdempotencyKey(companyId: string, key: string): Promise<KeyedMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>({
      name: "message_find_by_idempotency_key",
      text: `select * from message where company_id = $1 and idempotency_key = $2`,
      values: [companyId, key],
    });
    return rows[0] ? this.#keyedFromRow(rows[0]) : undefined;
  }

  async load(companyId: string, messageId: string): Promise<StoredMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>({
      name: "message_load",
      text: `select * from message where company_id = $1 and id = $2`,
      values: [companyId, messageId],
    });
    return rows[0] ? this.#fromRow(rows[0]) : undefined;
  }

  /**
   * The message with whether its company may send, in one read: what a
   * handoff attempt needs (src/capabilities/messages/lifecycle). A company
   * may send while it is entitled to the mail API and the sending guard has
   * not suspended it (a primary-key probe of sending_guard).
   */
  async loadForHandoff(companyId: string, messageId: string): Promise<HandoffCandidate | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow & { company_may_send: boolean; has_attachments: boolean }>({
      name: "message_load_for_handoff",
      text: `select m.*, (c.entitlement_api and not exists (select 1 from sending_guard g where g.company_id = m.company_id and g.suspended_at is not null)) as company_may_send,
                    exists (select 1 from message_attachment a where a.message_id = m.id and a.company_id = m.company_id) as has_attachments
               from message m join company c on c.id = m.company_id
              where m.company_id = $1 and m.id = $2`,
      values: [companyId, messageId],
    });
    const row = rows[0];
    return row
      ? { message: { ...this.#fromRow(row), hasAttachments: row.has_attachments }, companyMaySend: row.company_may_send === true }
      : undefined;
  }

  /**
   * The message a provider event is about. Provider message ids are unique
   * per provider (index message_provider_id_index); the caller is the
   * provider, not a tenant, which is why this lookup has no company id.
   */
  async findByProviderMessageId(provider: string, providerMessageId: string): Promise<StoredMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>({
      name: "message_find_by_provider_message_id",
      text: `select * from message where provider = $1 and provider_message_id = $2`,
      values: [provider, providerMessageId],
    });
    return rows[0] ? this.#fromRow(rows[0]) : undefined;
  }

  /** Messages whose workflow is not known to exist yet (the outbox), oldest first. */
  async unstarted(limit: number, olderThanMs: number): Promise<UnstartedMessage[]> {
    const pool = await this.#db();
    const { rows } = await pool.query<{ id: string; company_id: string; recipient_domain: string }>(
      `select id, company_id, recipient_domain from message
        where workflow_started_at is null and created_at < now() - make_interval(secs => $2::double precision / 1000)
        order by created_at limit $1`,
      [limit, olderThanMs],
    );
    return rows.map((r) => ({ id: r.id, companyId: r.company_id, recipientDomain: r.recipient_domain }));
  }

  async markWorkflowStarted(companyId: string, messageId: string): Promise<void> {
    const pool = await this.#db();
    await pool.query(
      `update message set workflow_started_at = coalesce(workflow_started_at, now()) where company_id = $1 and id = $2`,
      [companyId, messageId],
    );
  }

  async markWorkflowsStarted(messages: readonly Pick<UnstartedMessage, "companyId" | "id">[]): Promise<void> {
    if (messages.length === 0) return;
    const pool = await this.#db();
    // Each row is matched on its company and id (the tenant rule holds per row).
    await pool.query({
      name: "message_mark_workflows_started",
      text: `update message m set workflow_started_at = coalesce(m.workflow_started_at, now())
               from unnest($1::uuid[], $2::uuid[]) as s(company_id, id)
              where m.company_id = s.company_id and m.id = s.id`,
      values: [messages.map((m) => m.companyId), messages.map((m) => m.id)],
    });
  }

  async companyMaySend(companyId: string): Promise<boolean> {
    const pool = await this.#db();
    const { rows } = await pool.query<{ may_send: boolean }>(
      `select c.entitlement_api and not exists (select 1 from sending_guard g where g.company_id = c.id and g.suspended_at is not null) as may_send
         from company c where c.id = $1`,
      [companyId],
    );
    return rows[0]?.may_send === true;
  }

  /**
   * Moves a message to `move.to` if the transition is allowed from its
   * current status, recording the event and webhook events with it, in one
   * statement (atomic without a transaction: one round trip instead of up to
   * six). The event and webhook records are idempotent (unique indexes), so
   * a retried activity records nothing twice. Returns the status after the
   * call (unchanged when the move was not allowed).
   */
  async move(companyId: string, messageId: string, move: Move): Promise<MoveResult> {
    const pool = await this.#db();
    const { rows } = await pool.query<MoveRow>({ ...MOVE, values: moveValues(companyId, messageId, move, null) });
    const moved = rows[0]?.moved_status ?? null;
    if (moved !== null) return { moved: true, status: moved };
    return { moved: false, status: await this.#currentStatus(pool, companyId, messageId, move.to) };
  }

  /**
   * One statement: the conditional update takes the lease; when it cannot
   * (another attempt holds it, or the message is past its handoff), the
   * row as the statement saw it says why. A claim that waited for a
   * concurrent one re-checks the row after it (PostgreSQL re-evaluates the
   * condition on the new row version), so two attempts never both claim.
   */
  async claimHandoff(companyId: string, messageId: string, leaseMs: number): Promise<HandoffClaim> {
    const pool = await this.#db();
    const token = randomUUID();
    const { rows } = await pool.query<{ claimed: boolean; status: MessageStatusName | null; held_for_ms: number | null }>({
      name: "message_claim_handoff",
      text: `with claimed as (
               update message set status = 'processing', handoff_until = now() + make_interval(secs => $3::double precision / 1000),
                      handoff_token = $5
                where company_id = $1 and id = $2 and status = any($4::text[])
                  and (handoff_until is null or handoff_until <= now())
               returning 1
             )
             select exists (select 1 from claimed) as claimed, m.status,
                    greatest(0, ceil(extract(epoch from (m.handoff_until - now())) * 1000))::int as held_for_ms
               from (select 1) one left join message m on m.company_id = $1 and m.id = $2`,
      values: [companyId, messageId, leaseMs, BEFORE_HANDOFF, token],
    });
    const row = rows[0];
    if (row?.claimed) return { claimed: true, token };
    // Read in the statement's snapshot: a claim it waited for may not show; the caller then waits a little anyway.
    return { claimed: false, status: row?.status ?? "processing", heldForMs: row?.held_for_ms ?? 0 };
  }

  async renewHandoff(companyId: string, messageId: string, token: string, leaseMs: number): Promise<boolean> {
    const pool = await this.#db();
    const { rowCount } = await pool.query({
      name: "message_renew_handoff",
      text: `update message set handoff_until = now() + make_interval(secs => $4::double precision / 1000)
              where company_id = $1 and id = $2 and status = 'processing' and handoff_token = $3`,
      values: [companyId, messageId, token, leaseMs],
    });
    return (rowCount ?? 0) > 0;
  }

  async releaseHandoff(companyId: string, messageId: string, token: string): Promise<void> {
    const pool = await this.#db();
    await pool.query({
      name: "message_release_handoff",
      text: `update message set handoff_until = null, handoff_token = null
              where company_id = $1 and id = $2 and status = 'processing' and handoff_token = $3`,
      values: [companyId, messageId, token],
    });
  }

  async providerEventRecorded(providerEventId: string): Promise<boolean> {
    const pool = await this.#db();
    const { rowCount } = await pool.query(`select 1 from message_event where provider_event_id = $1`, [providerEventId]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * The provider event id is looked up and the move made in one statement;
   * two reports of one event racing each other both pass the lookup, and
   * the unique index on provider_event_id then lets one record the event
   * (the other's move is a no-op in the status rules, or the same move).
   */
  async moveForProviderEvent(
    companyId: string,
    messageId: string,
    move: Move & { readonly providerEventId: string },
  ): Promise<{ applied: boolean; status: MessageStatusName }> {
    const pool = await this.#db();
    const { rows } = await pool.query<MoveRow>({ ...MOVE, values: moveValues(companyId, messageId, move, move.providerEventId) });
    const row = rows[0];
    if (row?.moved_status) return { applied: true, status: row.moved_status };
    // Applied only by the report that recorded the event: of two racing reports of one event, the other's insert met the unique index.
    return { applied: row?.recorded === true, status: await this.#currentStatus(pool, companyId, messageId, move.to) };
  }

  /**
   * The status as it is now, read after the move statement: that
   * statement's own snapshot may predate a concurrent move it waited for
   * (a status the workflow must not take for the current one).
   */
  async #currentStatus(pool: Pool, companyId: string, messageId: string, fallback: MessageStatusName): Promise<MessageStatusName> {
    const current = await pool.query<{ status: MessageStatusName }>(`select status from message where company_id = $1 and id = $2`, [
      companyId,
      messageId,
    ]);
    return current.rows[0]?.status ?? fallback;
  }
}

interface MoveRow {
  /** The new status when the message moved, null when the move was not allowed (or the event was seen). */
  moved_status: MessageStatusName | null;
  /** An event with the move's provider event id was recorded before. */
  seen: boolean;
  /** This statement recorded the move's event (false when a concurrent report of the same event won the unique index). */
  recorded: boolean;
}

/**
 * One move as one statement. Data-modifying CTEs all run on the same
 * snapshot and their writes are all-or-nothing with the statement:
 * - `seen`: a provider event already recorded ($15; null for other moves) stops every write;
 * - `moved`: the conditional status change (statuses before the target, $9);
 * - `touched`: a provider event that does not move the status still
 *   advances last_event_at (only when `moved` did not update the row, so
 *   the row is never updated twice in the statement);
 * - `event`: the move's event ($10), kept even when the status did not move;
 * - `webhooks`: the webhook events ($13, $14), only with a move;
 * - `counted`: the move's outcome in the statistics (message-stats.ts), only with a move.
 */
const MOVE = {
  name: "message_move",
  text: `with seen as (
           select 1 from message_event where $15::text is not null and provider_event_id = $15::text
         ),
         moved as (
           update message set
             status = $3,
             error_code = coalesce($5, error_code),
             provider = coalesce($6, provider),
             provider_message_id = coalesce($7, provider_message_id),
             sent_at = case when $3 = 'sent' then $4 else sent_at end,
             last_event_at = case when $8 then greatest(coalesce(last_event_at, $4), $4) else last_event_at end
           where company_id = $1 and id = $2 and status = any($9::text[]) and not exists (select 1 from seen)
           returning id, company_id, status, tags, template_id
         ),
         touched as (
           update message set last_event_at = greatest(coalesce(last_event_at, $4), $4)
            where company_id = $1 and id = $2 and $8
              and not exists (select 1 from moved) and not exists (select 1 from seen)
         ),
         event as (
           insert into message_event (message_id, company_id, type, at, provider_event_id, detail)
           select $2, $1, $10::text, $4, $11::text, $12::text
            where $8 and not exists (select 1 from seen)
           on conflict do nothing
           returning 1
         ),
         webhooks as (
           insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
           select $1, w.event, $4, w.data, 'message:' || $2::text || ':' || w.event
             from unnest($13::text[], $14::jsonb[]) as w(event, data)
            where exists (select 1 from moved)
           on conflict (dedupe_key) do nothing
         )${COUNT_MOVED}
         select (select status from moved) as moved_status, exists (select 1 from seen) as seen,
                exists (select 1 from event) as recorded`,
};

/**
 * The acceptance and move statements with and without the statistics'
 * counting, for bench/stats.ts: the same-run cost of the aggregates.
 */
export const MESSAGE_STATEMENTS = {
  counted: { insert: INSERT_QUEUED_SQL, move: MOVE.text },
  uncounted: { insert: INSERT_QUEUED, move: MOVE.text.replace(COUNT_MOVED, "") },
} as const;

export function moveValues(companyId: string, messageId: string, move: Move, providerEventId: string | null): unknown[] {
  const webhooks = move.webhooks ?? [];
  return [
    companyId,
    messageId,
    move.to,
    move.at,
    move.errorCode ?? null,
    move.provider ?? null,
    move.providerMessageId ?? null,
    move.eventType !== undefined,
    // No status to move from: the event alone is recorded.
    move.keepStatus ? [] : statusesBefore(move.to),
    move.eventType ?? null,
    move.providerEventId ?? null,
    move.detail ?? null,
    webhooks.map((webhook) => webhook.event),
    webhooks.map((webhook) => JSON.stringify(webhook.data)),
    providerEventId,
  ];
}
