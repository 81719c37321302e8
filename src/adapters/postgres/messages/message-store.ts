import type { Pool, PoolClient } from "../sql.ts";
import { toDate } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import type { MessageStatusName } from "../../../capabilities/messages/statuses.ts";
import { statusesBefore } from "../../../capabilities/messages/statuses.ts";
import type {
  KeyedMessage,
  MessageStore,
  Move,
  MoveResult,
  NewMessage,
  StoredMessage,
  UnstartedMessage,
  WebhookEventDraft,
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
  /** Read by the idempotency-key lookups only. */
  request_fingerprint?: Buffer | null;
}

function fromRow(row: MessageRow): StoredMessage {
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
    html: row.html,
    text: row.text_body,
    provider: row.provider,
    providerMessageId: row.provider_message_id,
    errorCode: row.error_code,
    createdAt: toDate(row.created_at),
  };
}

function keyedFromRow(row: MessageRow): KeyedMessage {
  return { ...fromRow(row), requestFingerprint: row.request_fingerprint ? new Uint8Array(row.request_fingerprint) : null };
}

export function recipientDomainOf(address: string): string {
  return address.slice(address.lastIndexOf("@") + 1).toLowerCase();
}

export class PostgresMessageStore implements MessageStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * Records an accepted message as `queued`. With an idempotency key, the
   * (company, key) unique index makes concurrent identical sends create one
   * row: the losers get the existing message back (`created: false`).
   */
  async insertQueued(message: NewMessage): Promise<{ message: KeyedMessage; created: boolean }> {
    const pool = await this.#db();
    const inserted = await pool.query<MessageRow>(
      `insert into message (id, company_id, api_key_id, idempotency_key, recipient, recipient_name,
         recipient_domain, sender_id, from_email, from_name, reply_to, subject, html, text_body, template_id, tags, status,
         request_fingerprint)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, 'queued', $17)
       on conflict (company_id, idempotency_key) do nothing
       returning *`,
      [
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
        message.html,
        message.text,
        message.templateId,
        JSON.stringify(message.tags),
        message.requestFingerprint ? Buffer.from(message.requestFingerprint) : null,
      ],
    );
    const row = inserted.rows[0];
    if (row) return { message: keyedFromRow(row), created: true };
    const existing = await this.findByIdempotencyKey(message.companyId, message.idempotencyKey ?? "");
    if (!existing) throw new Error("idempotency conflict without an existing message");
    return { message: existing, created: false };
  }

  async findByIdempotencyKey(companyId: string, key: string): Promise<KeyedMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>(`select * from message where company_id = $1 and idempotency_key = $2`, [
      companyId,
      key,
    ]);
    return rows[0] ? keyedFromRow(rows[0]) : undefined;
  }

  async load(companyId: string, messageId: string): Promise<StoredMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>(`select * from message where company_id = $1 and id = $2`, [companyId, messageId]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /**
   * The message a provider event is about. Provider message ids are unique
   * per provider (index message_provider_id_index); the caller is the
   * provider, not a tenant, which is why this lookup has no company id.
   */
  async findByProviderMessageId(provider: string, providerMessageId: string): Promise<StoredMessage | undefined> {
    const pool = await this.#db();
    const { rows } = await pool.query<MessageRow>(
      `select * from message where provider = $1 and provider_message_id = $2`,
      [provider, providerMessageId],
    );
    return rows[0] ? fromRow(rows[0]) : undefined;
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

  async companyMaySend(companyId: string): Promise<boolean> {
    const pool = await this.#db();
    const { rows } = await pool.query<{ entitlement_api: boolean }>(`select entitlement_api from company where id = $1`, [companyId]);
    return rows[0]?.entitlement_api === true;
  }

  /**
   * Moves a message to `move.to` if the transition is allowed from its
   * current status, recording the event and webhook events, all in one
   * transaction. The event and webhook records are idempotent (unique
   * indexes), so a retried activity records nothing twice. Returns the
   * status after the call (unchanged when the move was not allowed).
   */
  move(companyId: string, messageId: string, move: Move): Promise<MoveResult> {
    return inTransaction(this.#db, (tx) => this.#move(tx, companyId, messageId, move));
  }

  async providerEventRecorded(providerEventId: string): Promise<boolean> {
    const pool = await this.#db();
    const { rowCount } = await pool.query(`select 1 from message_event where provider_event_id = $1`, [providerEventId]);
    return (rowCount ?? 0) > 0;
  }

  /**
   * The provider event id is looked up and the move made in one
   * transaction; two reports of one event racing each other both pass the
   * lookup, and the unique index on provider_event_id then lets one record
   * the event (the other's move is a no-op in the status rules, or the same move).
   */
  moveForProviderEvent(companyId: string, messageId: string, move: Move & { readonly providerEventId: string }): Promise<{ applied: boolean; status: MessageStatusName }> {
    return inTransaction(this.#db, async (tx) => {
      const seen = await tx.query(`select 1 from message_event where provider_event_id = $1`, [move.providerEventId]);
      if (seen.rowCount) {
        const current = await tx.query<{ status: MessageStatusName }>(`select status from message where company_id = $1 and id = $2`, [
          companyId,
          messageId,
        ]);
        return { applied: false, status: current.rows[0]?.status ?? move.to };
      }
      const moved = await this.#move(tx, companyId, messageId, move);
      return { applied: true, status: moved.status };
    });
  }

  async #move(tx: PoolClient, companyId: string, messageId: string, move: Move): Promise<MoveResult> {
    const updated = await tx.query<{ status: MessageStatusName }>(
      `update message set
         status = $3,
         error_code = coalesce($5, error_code),
         provider = coalesce($6, provider),
         provider_message_id = coalesce($7, provider_message_id),
         sent_at = case when $3 = 'sent' then $4 else sent_at end,
         last_event_at = case when $8 then greatest(coalesce(last_event_at, $4), $4) else last_event_at end
       where company_id = $1 and id = $2 and status = any($9::text[])
       returning status`,
      [
        companyId,
        messageId,
        move.to,
        move.at,
        move.errorCode ?? null,
        move.provider ?? null,
        move.providerMessageId ?? null,
        move.eventType !== undefined,
        statusesBefore(move.to),
      ],
    );
    const moved = updated.rowCount === 1;
    if (move.eventType) await this.#recordEvent(tx, companyId, messageId, move, !moved);
    if (moved) for (const webhook of move.webhooks ?? []) await this.#recordWebhook(tx, companyId, messageId, move.at, webhook);
    if (moved) return { moved, status: move.to };
    const current = await tx.query<{ status: MessageStatusName }>(`select status from message where company_id = $1 and id = $2`, [
      companyId,
      messageId,
    ]);
    return { moved, status: current.rows[0]?.status ?? move.to };
  }

  /**
   * Appends an event. A provider event is kept even when it does not move
   * the status (a late `delivered`), and it still advances last_event_at.
   */
  async #recordEvent(tx: PoolClient, companyId: string, messageId: string, move: Move, touchLastEvent: boolean): Promise<void> {
    await tx.query(
      `insert into message_event (message_id, company_id, type, at, provider_event_id, detail)
       values ($1, $2, $3, $4, $5, $6)
       on conflict do nothing`,
      [messageId, companyId, move.eventType, move.at, move.providerEventId ?? null, move.detail ?? null],
    );
    if (touchLastEvent) {
      await tx.query(
        `update message set last_event_at = greatest(coalesce(last_event_at, $3), $3) where company_id = $1 and id = $2`,
        [companyId, messageId, move.at],
      );
    }
  }

  async #recordWebhook(tx: PoolClient, companyId: string, messageId: string, at: Date, webhook: WebhookEventDraft): Promise<void> {
    await tx.query(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       values ($1, $2, $3, $4, $5)
       on conflict (dedupe_key) do nothing`,
      [companyId, webhook.event, at, JSON.stringify(webhook.data), `message:${messageId}:${webhook.event}`],
    );
  }
}
