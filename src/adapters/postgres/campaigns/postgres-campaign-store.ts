/**
 * Campaigns and their recipients in PostgreSQL, always per company (every
 * statement filters on company_id). Plain SQL on the pool: the audience
 * is fixed by one INSERT ... SELECT (a contact in two lists is one row,
 * through the unique (campaign_id, contact_id)), and the end records the
 * campaign.sent webhook event in the transaction that ends the campaign.
 */
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import type {
  AudiencePreview,
  CampaignCounters,
  CampaignDraft,
  CampaignEngagementPort,
  CampaignRecord,
  CampaignRecipientResults,
  CampaignState,
  CampaignStore,
  RecipientOutcome,
  StateChange,
  WaitingRecipient,
} from "../../../capabilities/campaigns/ports.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import { insertAuditRow } from "../audit/audit-rows.ts";
import { isUuid } from "../ids.ts";
import { toDate, type Pool, type PoolClient } from "../sql.ts";
import { inTransaction } from "../transaction.ts";

type Queryable = Pick<PoolClient, "query">;

interface CampaignRow {
  id: string;
  company_id: string;
  name: string;
  state: CampaignState;
  list_ids: string[];
  tag: string | null;
  template_id: string | null;
  subject: string | null;
  html: string | null;
  text_body: string | null;
  sender_id: string | null;
  reply_to: string | null;
  track_opens: boolean;
  track_clicks: boolean;
  send_at: string | Date | null;
  started_at: string | Date | null;
  finished_at: string | Date | null;
  created_at: string | Date;
  updated_at: string | Date;
  counters: Record<string, number> | null;
}

/** The counters of a campaign, by outcome, as one jsonb (a campaign row's `counters`). */
const COUNTERS = `(select jsonb_object_agg(outcome, n) from (
                     select r.outcome, count(*)::int as n from campaign_recipient r
                      where r.company_id = c.company_id and r.campaign_id = c.id group by r.outcome) o) as counters`;
const SELECT = `select c.*, ${COUNTERS} from campaign c`;
const SELECT_POSITIONED = `select c.*, ${COUNTERS}, to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at from campaign c`;

function countersOf(raw: Record<string, number> | null): CampaignCounters {
  const of = (outcome: RecipientOutcome): number => raw?.[outcome] ?? 0;
  const counters = {
    accepted: of("accepted"),
    failed: of("failed"),
    unknown: of("unknown"),
    suppressed: of("suppressed"),
    skipped: of("skipped"),
    waiting: of("waiting"),
  };
  return { ...counters, audience: Object.values(counters).reduce((a, b) => a + b, 0) };
}

function recordOf(row: CampaignRow): CampaignRecord {
  return {
    id: row.id,
    companyId: row.company_id,
    name: row.name,
    state: row.state,
    listIds: row.list_ids,
    tag: row.tag,
    templateId: row.template_id,
    subject: row.subject,
    html: row.html,
    text: row.text_body,
    senderId: row.sender_id,
    replyTo: row.reply_to,
    trackOpens: row.track_opens,
    trackClicks: row.track_clicks,
    sendAt: toDate(row.send_at),
    startedAt: toDate(row.started_at),
    finishedAt: toDate(row.finished_at),
    counters: countersOf(row.counters),
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/**
 * The contacts of the lists (and tag), each once, with their first outcome
 * (docs/campaigns.md, "Who receives it"). $1 company, $2 list ids, $3 tag.
 */
const AUDIENCE = `select distinct on (ct.id) ct.id as contact_id, ct.email,
                         case when ct.status in ('pending', 'unsubscribed') then 'skipped'
                              when ct.status in ('bounced', 'complained', 'suppressed') then 'suppressed'
                              when exists (select 1 from suppression s where s.company_id = ct.company_id and s.email = ct.email_normalized) then 'suppressed'
                              when ct.status = 'subscribed' then 'waiting'
                              else 'skipped' end as outcome
                    from contact_list_member m
                    join contact ct on ct.company_id = m.company_id and ct.id = m.contact_id
                   where m.company_id = $1 and m.list_id = any($2::uuid[]) and ($3::text is null or $3::text = any(ct.tags))
                   order by ct.id`;

export class PostgresCampaignStore implements CampaignStore, CampaignEngagementPort {
  readonly #pool: () => Promise<Pool>;

  constructor(pool: () => Promise<Pool>) {
    this.#pool = pool;
  }

  async create(companyId: string, id: string, draft: CampaignDraft, audit: AuditNote): Promise<CampaignRecord> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<CampaignRow>(
        `insert into campaign (id, company_id, name, state, list_ids, tag, template_id, subject, html, text_body, sender_id, reply_to, track_opens, track_clicks)
         values ($1, $2, $3, 'draft', $4::uuid[], $5, $6, $7, $8, $9, $10, $11, $12, $13)
         returning *, null::jsonb as counters`,
        [id, companyId, ...draftValues(draft)],
      );
      await insertAuditRow(client, companyId, { ...audit, targetType: "campaign", targetId: id }, new Date());
      return recordOf(rows[0] as CampaignRow);
    });
  }

  async update(
    companyId: string,
    id: string,
    decide: (current: CampaignRecord) => { readonly draft: CampaignDraft; readonly audit: AuditNote },
  ): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return inTransaction(this.#pool, async (client) => {
      const current = await this.#locked(client, companyId, id);
      if (!current) return undefined;
      const { draft, audit } = decide(current);
      await client.query(
        `update campaign set name = $3, list_ids = $4::uuid[], tag = $5, template_id = $6, subject = $7, html = $8, text_body = $9,
                sender_id = $10, reply_to = $11, track_opens = $12, track_clicks = $13, updated_at = now()
          where company_id = $1 and id = $2`,
        [companyId, id, ...draftValues(draft)],
      );
      await insertAuditRow(client, companyId, { ...audit, targetType: "campaign", targetId: id }, new Date());
      return this.#read(client, companyId, id);
    });
  }

  async changeState(companyId: string, id: string, decide: (current: CampaignRecord) => StateChange): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return inTransaction(this.#pool, async (client) => {
      const current = await this.#locked(client, companyId, id);
      if (!current) return undefined;
      const change = decide(current);
      await client.query(
        `update campaign set state = $3, send_at = case when $4 then $5::timestamptz else send_at end,
                finished_at = case when $6 then now() else finished_at end, updated_at = now()
          where company_id = $1 and id = $2`,
        [companyId, id, change.state, change.sendAt !== undefined, change.sendAt ?? null, change.finished === true],
      );
      await insertAuditRow(client, companyId, { ...change.audit, targetType: "campaign", targetId: id }, new Date());
      return this.#read(client, companyId, id);
    });
  }

  async find(companyId: string, id: string): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return this.#read(await this.#pool(), companyId, id);
  }

  async stateOf(companyId: string, id: string): Promise<CampaignState | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    const pool = await this.#pool();
    const { rows } = await pool.query<{ state: CampaignState }>(`select state from campaign where company_id = $1 and id = $2`, [companyId, id]);
    return rows[0]?.state;
  }

  async list(companyId: string, state: CampaignState | undefined, after: KeysetPosition | null, limit: number): Promise<Positioned<CampaignRecord>[]> {
    if (!isUuid(companyId)) return [];
    const values: unknown[] = [companyId];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = ["c.company_id = $1"];
    if (state !== undefined) where.push(`c.state = ${param(state)}`);
    if (after) where.push(`(c.created_at, c.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`);
    const pool = await this.#pool();
    const { rows } = await pool.query<CampaignRow & { position_at: string }>(
      `${SELECT_POSITIONED}
        where ${where.join(" and ")}
        order by c.created_at desc, c.id desc
        limit ${param(limit)}`,
      values,
    );
    return rows.map((row) => ({ item: recordOf(row), position: { createdAt: row.position_at, id: row.id } }));
  }

  async missingLists(companyId: string, listIds: readonly string[]): Promise<string[]> {
    const pool = await this.#pool();
    const { rows } = await pool.query<{ id: string }>(
      `select x.id from unnest($2::uuid[]) as x(id)
        where not exists (select 1 from contact_list l where l.company_id = $1 and l.id = x.id)`,
      [companyId, listIds],
    );
    return rows.map((row) => row.id);
  }

  async previewAudience(companyId: string, listIds: readonly string[], tag: string | null): Promise<AudiencePreview> {
    const pool = await this.#pool();
    const { rows } = await pool.query<{ outcome: string; n: number }>(
      `select a.outcome, count(*)::int as n from (${AUDIENCE}) a group by a.outcome`,
      [companyId, listIds, tag],
    );
    const of = (outcome: string): number => rows.find((row) => row.outcome === outcome)?.n ?? 0;
    const receive = of("waiting");
    const skipped = of("skipped");
    const suppressed = of("suppressed");
    return { audience: receive + skipped + suppressed, receive, skipped, suppressed };
  }

  async results(companyId: string, id: string): Promise<CampaignRecipientResults | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    const pool = await this.#pool();
    const { rows } = await pool.query<{ counters: Record<string, number> | null; opened: number; clicked: number; unsubscribed: number; started_at: string | Date | null }>(
      `select ${COUNTERS}, c.started_at,
              (select count(*)::int from campaign_recipient r where r.company_id = c.company_id and r.campaign_id = c.id and r.opened_at is not null) as opened,
              (select count(*)::int from campaign_recipient r where r.company_id = c.company_id and r.campaign_id = c.id and r.clicked_at is not null) as clicked,
              (select count(*)::int from campaign_recipient r where r.company_id = c.company_id and r.campaign_id = c.id and r.unsubscribed_at is not null) as unsubscribed
         from campaign c where c.company_id = $1 and c.id = $2`,
      [companyId, id],
    );
    const row = rows[0];
    return row
      ? { counters: countersOf(row.counters), opened: row.opened, clicked: row.clicked, unsubscribed: row.unsubscribed, startedAt: toDate(row.started_at) }
      : undefined;
  }

  async markWorkflowStarted(companyId: string, id: string): Promise<void> {
    const pool = await this.#pool();
    await pool.query(`update campaign set workflow_started_at = coalesce(workflow_started_at, now()) where company_id = $1 and id = $2`, [companyId, id]);
  }

  async start(companyId: string, id: string): Promise<{ state: CampaignState; waitMs: number } | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ state: CampaignState; list_ids: string[]; tag: string | null; wait_ms: number }>(
        `select state, list_ids, tag, greatest(0, ceil(extract(epoch from (send_at - now())) * 1000))::float8 as wait_ms
           from campaign where company_id = $1 and id = $2 for update`,
        [companyId, id],
      );
      const row = rows[0];
      if (!row) return undefined;
      if (row.state !== "scheduled") return { state: row.state, waitMs: 0 };
      if (row.wait_ms > 0) return { state: row.state, waitMs: row.wait_ms };
      await client.query(
        `insert into campaign_recipient (id, company_id, campaign_id, contact_id, email, outcome)
         select gen_random_uuid(), $1, $4, a.contact_id, a.email, a.outcome from (${AUDIENCE}) a
         on conflict (campaign_id, contact_id) do nothing`,
        [companyId, row.list_ids, row.tag, id],
      );
      await client.query(`update campaign set state = 'sending', started_at = now(), updated_at = now() where company_id = $1 and id = $2`, [companyId, id]);
      return { state: "sending" as const, waitMs: 0 };
    });
  }

  async waiting(companyId: string, campaignId: string, limit: number): Promise<WaitingRecipient[]> {
    const pool = await this.#pool();
    const { rows } = await pool.query<{
      id: string;
      contact_id: string;
      email: string;
      status: string | null;
      suppressed: boolean;
      first_name: string | null;
      last_name: string | null;
      company_name: string | null;
      locale: string | null;
      attributes: Record<string, string | number | boolean | null> | null;
      copy_made: boolean;
    }>(
      `select r.id, r.contact_id, r.email, ct.status, ct.first_name, ct.last_name, ct.company_name, ct.locale, ct.attributes,
              exists (select 1 from suppression s where s.company_id = r.company_id and s.email = coalesce(ct.email_normalized, lower(r.email))) as suppressed,
              exists (select 1 from message m where m.company_id = r.company_id and m.id = r.id) as copy_made
         from campaign_recipient r
         left join contact ct on ct.company_id = r.company_id and ct.id = r.contact_id
        where r.company_id = $1 and r.campaign_id = $2 and r.outcome = 'waiting'
        order by r.id
        limit $3`,
      [companyId, campaignId, limit],
    );
    return rows.map((row) => ({
      id: row.id,
      contactId: row.contact_id,
      email: row.email,
      contactStatus: row.status ?? undefined,
      suppressed: row.suppressed,
      firstName: row.first_name,
      lastName: row.last_name,
      companyName: row.company_name,
      locale: row.locale,
      attributes: row.attributes ?? {},
      copyMade: row.copy_made,
    }));
  }

  async countWaiting(companyId: string, campaignId: string): Promise<number> {
    const pool = await this.#pool();
    const { rows } = await pool.query<{ n: number }>(
      `select count(*)::int as n from campaign_recipient where company_id = $1 and campaign_id = $2 and outcome = 'waiting'`,
      [companyId, campaignId],
    );
    return rows[0]?.n ?? 0;
  }

  async settle(companyId: string, recipientId: string, outcome: Exclude<RecipientOutcome, "waiting">, at: Date): Promise<void> {
    const pool = await this.#pool();
    await pool.query(
      `update campaign_recipient set outcome = $3, handed_over_at = case when $3 in ('accepted', 'failed', 'unknown') then $4::timestamptz end
        where company_id = $1 and id = $2 and outcome = 'waiting'`,
      [companyId, recipientId, outcome, at],
    );
  }

  async finish(companyId: string, id: string, at: Date): Promise<CampaignCounters | undefined> {
    return inTransaction(this.#pool, async (client) => {
      const { rows } = await client.query<{ state: CampaignState; started_at: Date | null }>(
        `select state, started_at from campaign where company_id = $1 and id = $2 for update`,
        [companyId, id],
      );
      const row = rows[0];
      if (!row) return undefined;
      // A cancelled campaign's recipients that never got a copy are counted skipped.
      if (row.state === "cancelled") {
        await client.query(`update campaign_recipient set outcome = 'skipped' where company_id = $1 and campaign_id = $2 and outcome = 'waiting'`, [companyId, id]);
      }
      await client.query(
        `update campaign set state = case when state in ('sending', 'paused') then 'sent' else state end,
                finished_at = coalesce(finished_at, $3), updated_at = now()
          where company_id = $1 and id = $2`,
        [companyId, id, at],
      );
      const counters = countersOf((await client.query<{ counters: Record<string, number> | null }>(`select ${COUNTERS} from campaign c where c.company_id = $1 and c.id = $2`, [companyId, id])).rows[0]?.counters ?? null);
      if (row.started_at !== null) {
        const data = {
          campaignId: id,
          accepted: counters.accepted,
          failed: counters.failed,
          suppressed: counters.suppressed,
          skipped: counters.skipped,
          unknown: counters.unknown,
          occurredAt: at.toISOString(),
        };
        await client.query(
          `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
           values ($1, 'campaign.sent', $2, $3::jsonb, $4)
           on conflict (dedupe_key) do nothing`,
          [companyId, at, JSON.stringify(data), `campaign:${id}:campaign.sent`],
        );
      }
      return counters;
    });
  }

  recordOpen(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(`update campaign_recipient set opened_at = $3 where company_id = $1 and id = $2 and opened_at is null`, companyId, recipientId, at);
  }

  recordClick(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(`update campaign_recipient set clicked_at = $3 where company_id = $1 and id = $2 and clicked_at is null`, companyId, recipientId, at);
  }

  recordUnsubscribe(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(
      `update campaign_recipient set unsubscribed_at = $3 where company_id = $1 and id = $2 and unsubscribed_at is null`,
      companyId,
      recipientId,
      at,
    );
  }

  /** The first time only: a later open, click or unsubscribe keeps the first one's time. */
  async #engaged(statement: string, companyId: string, recipientId: string, at: Date): Promise<void> {
    if (!isUuid(companyId) || !isUuid(recipientId)) return;
    const pool = await this.#pool();
    await pool.query(statement, [companyId, recipientId, at]);
  }

  async #locked(client: Queryable, companyId: string, id: string): Promise<CampaignRecord | undefined> {
    const { rows } = await client.query<CampaignRow>(`select c.*, null::jsonb as counters from campaign c where c.company_id = $1 and c.id = $2 for update`, [companyId, id]);
    return rows[0] ? recordOf(rows[0]) : undefined;
  }

  async #read(db: Queryable, companyId: string, id: string): Promise<CampaignRecord | undefined> {
    const { rows } = await db.query<CampaignRow>(`${SELECT} where c.company_id = $1 and c.id = $2`, [companyId, id]);
    return rows[0] ? recordOf(rows[0]) : undefined;
  }
}

function draftValues(draft: CampaignDraft): unknown[] {
  return [
    draft.name,
    draft.listIds,
    draft.tag,
    draft.templateId,
    draft.subject,
    draft.html,
    draft.text,
    draft.senderId,
    draft.replyTo,
    draft.trackOpens,
    draft.trackClicks,
  ];
}
