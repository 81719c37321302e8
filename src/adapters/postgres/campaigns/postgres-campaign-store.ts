/**
 * Campaigns and their recipients in PostgreSQL, always per company (every
 * statement filters on company_id; an id that cannot be a row id finds
 * nothing). Through MikroORM, each call on its own EntityManager fork; a
 * change is one transaction that locks the campaign (`for update`) and
 * decides on what it finds there, so that concurrent changes apply one
 * after the other and only legal moves happen.
 *
 * Plain SQL on the pg pool stays for the send loop that `npm run
 * bench:campaign` (bench/campaign.ts: a 10,000-recipient campaign's
 * recipients/s) measures, the statements the campaign workflow's batch
 * activity runs per batch or per recipient: `waiting` and `countWaiting`
 * (each batch) and `settle` (each recipient). The loop's other reads,
 * `find` (once per batch) and `stateOf` (every fifth recipient), are the
 * API's reads too and go through MikroORM: its 0.4 ms or so more a call
 * than plain SQL comes to under 0.1 ms a recipient, beside the 9 ms or so
 * a recipient takes at the benchmark's rate. `start` and `finish` run once
 * per campaign; opens, clicks and unsubscribes come from tracking, which
 * no benchmark measures.
 *
 * The audience is one SQL statement (AUDIENCE): a contact in two lists is
 * one row (`distinct on`, and the unique (campaign_id, contact_id) when it
 * is fixed), and its first outcome is a `case` over the contact and the
 * suppression list, which the query builder has no form for.
 */
import { LockMode, raw } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
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
import { persistAuditRow } from "../audit/audit-rows.ts";
import { CampaignRecipientSchema, CampaignSchema, ContactListSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { keysetRows } from "../keyset.ts";
import { poolOf, toDate, type Pool } from "../sql.ts";
import { insertOutboxEvents } from "../webhooks/outbox-events.ts";

/** A campaign row as PostgreSQL answers it (read unmapped: timestamps as the ORM pool gives them). */
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
  /** The recipients per outcome (COUNTERS); absent where the read does not need them. */
  counters?: Record<string, number> | null;
}

/**
 * The counters of the campaign aliased `c`, by outcome, as one jsonb column
 * of the campaign's own read: a campaign or a page of them is one statement.
 */
const COUNTERS = `(select jsonb_object_agg(o.outcome, o.n) from (
                     select r.outcome, count(*)::int as n from campaign_recipient r
                      where r.company_id = c.company_id and r.campaign_id = c.id group by r.outcome) o) as counters`;

/**
 * The contacts of the lists (and tag), each once, with their first outcome
 * (docs/campaigns.md, "Who receives it"), as a derived table `a`. Values:
 * company, list ids, tag, tag.
 */
const AUDIENCE = `(select distinct on (ct.id) ct.id as contact_id, ct.email,
                          case when ct.status in ('pending', 'unsubscribed') then 'skipped'
                               when ct.status in ('bounced', 'complained', 'suppressed') then 'suppressed'
                               when exists (select 1 from suppression s where s.company_id = ct.company_id and s.email = ct.email_normalized) then 'suppressed'
                               when ct.status = 'subscribed' then 'waiting'
                               else 'skipped' end as outcome
                     from contact_list_member m
                     join contact ct on ct.company_id = m.company_id and ct.id = m.contact_id
                    where m.company_id = ? and m.list_id = any(array[?]::uuid[]) and (?::text is null or ?::text = any(ct.tags))
                    order by ct.id) a`;

/** MikroORM writes a value list in place of `?`; `array[?]` makes it an array (`array[]` when empty). */
function audienceValues(companyId: string, listIds: readonly string[], tag: string | null): unknown[] {
  return [companyId, [...listIds], tag, tag];
}

function countersOf(raw: Readonly<Record<string, number>> | null | undefined): CampaignCounters {
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

/** The draft as the campaign's properties. */
function draftFields(draft: CampaignDraft) {
  return {
    name: draft.name,
    listIds: [...draft.listIds],
    tag: draft.tag,
    templateId: draft.templateId,
    subject: draft.subject,
    html: draft.html,
    text: draft.text,
    senderId: draft.senderId,
    replyTo: draft.replyTo,
    trackOpens: draft.trackOpens,
    trackClicks: draft.trackClicks,
  };
}

/** The state column holds a CampaignState: its check constraint admits no other. */
function campaignState(state: string): CampaignState {
  return state as CampaignState;
}

type EngagementColumn = "openedAt" | "clickedAt" | "unsubscribedAt";

export class PostgresCampaignStore implements CampaignStore, CampaignEngagementPort {
  readonly #orm: MikroORM;
  /** The pool behind the ORM, for the send loop's plain SQL. */
  readonly #pool: () => Promise<Pool>;

  constructor(orm: MikroORM) {
    this.#orm = orm;
    this.#pool = poolOf(orm);
  }

  #fork(): EntityManager {
    return this.#orm.em.fork();
  }

  async create(companyId: string, id: string, draft: CampaignDraft, audit: AuditNote): Promise<CampaignRecord> {
    return this.#fork().transactional(async (em) => {
      // An insert answering the row rather than a persisted entity: its times are the database's now().
      const inserted = await em
        .createQueryBuilder(CampaignSchema)
        .insert({ id, company: companyId, state: "draft", ...draftFields(draft) })
        .returning(["*"])
        .execute("run", false);
      const row = (inserted.rows as CampaignRow[] | undefined)?.[0];
      if (!row) throw new Error("campaign insert answered no row");
      persistAuditRow(em, companyId, { ...audit, targetType: "campaign", targetId: id });
      await em.flush();
      return recordOf(row);
    });
  }

  async update(
    companyId: string,
    id: string,
    decide: (current: CampaignRecord) => { readonly draft: CampaignDraft; readonly audit: AuditNote },
  ): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return this.#fork().transactional(async (em) => {
      const current = await locked(em, companyId, id);
      if (!current) return undefined;
      const { draft, audit } = decide(current);
      // A native update rather than a flush: the unit of work's UPDATE would name the id alone, not the company.
      await em.nativeUpdate(CampaignSchema, { company: companyId, id }, { ...draftFields(draft), updatedAt: raw("now()") });
      persistAuditRow(em, companyId, { ...audit, targetType: "campaign", targetId: id });
      await em.flush();
      return read(em, companyId, id);
    });
  }

  async changeState(companyId: string, id: string, decide: (current: CampaignRecord) => StateChange): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return this.#fork().transactional(async (em) => {
      const current = await locked(em, companyId, id);
      if (!current) return undefined;
      const change = decide(current);
      await em.nativeUpdate(
        CampaignSchema,
        { company: companyId, id },
        {
          state: change.state,
          // No time in the change keeps the stored one.
          ...(change.sendAt !== undefined ? { sendAt: change.sendAt } : {}),
          ...(change.finished === true ? { finishedAt: raw("now()") } : {}),
          updatedAt: raw("now()"),
        },
      );
      persistAuditRow(em, companyId, { ...change.audit, targetType: "campaign", targetId: id });
      await em.flush();
      return read(em, companyId, id);
    });
  }

  async find(companyId: string, id: string): Promise<CampaignRecord | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return read(this.#fork(), companyId, id);
  }

  async stateOf(companyId: string, id: string): Promise<CampaignState | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    const campaign = await this.#fork().findOne(CampaignSchema, { company: companyId, id }, { fields: ["state"] });
    return campaign ? campaignState(campaign.state) : undefined;
  }

  async list(companyId: string, state: CampaignState | undefined, after: KeysetPosition | null, limit: number): Promise<Positioned<CampaignRecord>[]> {
    if (!isUuid(companyId)) return [];
    // Positions with microseconds (positionText): a Date's milliseconds would repeat or skip campaigns created within one.
    const query = this.#fork()
      .createQueryBuilder(CampaignSchema, "c")
      .select(["*", raw(COUNTERS)])
      .where({ company: companyId, ...(state !== undefined ? { state } : {}) })
      .orderBy({ createdAt: "desc", id: "desc" })
      .limit(limit);
    const rows = await keysetRows(query, { created: "c.created_at", id: "c.id", direction: "<" }, after);
    // The campaign row as selected ("*" and the counters).
    return rows.map(({ row, position }) => ({ item: recordOf(row as unknown as CampaignRow), position }));
  }

  async missingLists(companyId: string, listIds: readonly string[]): Promise<string[]> {
    // PostgreSQL answers a uuid in lower case, whatever case it was written in.
    const wanted = listIds.map((id) => (isUuid(id) ? id.toLowerCase() : id));
    const candidates = wanted.filter(isUuid);
    if (!isUuid(companyId) || candidates.length === 0) return wanted;
    const found = await this.#fork().find(ContactListSchema, { company: companyId, id: { $in: candidates } }, { fields: ["id"] });
    const known = new Set(found.map((list) => list.id));
    return wanted.filter((id) => !known.has(id));
  }

  async previewAudience(companyId: string, listIds: readonly string[], tag: string | null): Promise<AudiencePreview> {
    const lists = listIds.filter(isUuid);
    if (!isUuid(companyId) || lists.length === 0) return { audience: 0, receive: 0, skipped: 0, suppressed: 0 };
    // The audience's rules are one statement (AUDIENCE); the same as `start` fixes, only counted.
    const rows = await this.#fork().execute<{ outcome: string; n: number }[]>(
      `select a.outcome, count(*)::int as n from ${AUDIENCE} group by a.outcome`,
      audienceValues(companyId, lists, tag),
    );
    const of = (outcome: string): number => rows.find((row) => row.outcome === outcome)?.n ?? 0;
    const receive = of("waiting");
    const skipped = of("skipped");
    const suppressed = of("suppressed");
    return { audience: receive + skipped + suppressed, receive, skipped, suppressed };
  }

  async results(companyId: string, id: string): Promise<CampaignRecipientResults | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    const em = this.#fork();
    const campaign = await em.findOne(CampaignSchema, { company: companyId, id }, { fields: ["startedAt"] });
    if (!campaign) return undefined;
    const figures = await recipientFigures(em, companyId, id);
    return { ...figures, startedAt: campaign.startedAt ?? null };
  }

  async markWorkflowStarted(companyId: string, id: string): Promise<void> {
    if (!isUuid(companyId) || !isUuid(id)) return;
    // The first start's time stays.
    await this.#fork().nativeUpdate(CampaignSchema, { company: companyId, id }, { workflowStartedAt: raw("coalesce(workflow_started_at, now())") });
  }

  async start(companyId: string, id: string): Promise<{ state: CampaignState; waitMs: number } | undefined> {
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return this.#fork().transactional(async (em) => {
      // Under the lock, concurrent starts go one after the other: the first fixes the audience, the others find it sending.
      // The time left is the database's, as the scheduled time is compared with its now().
      const row = await em
        .createQueryBuilder(CampaignSchema, "c")
        .select(["state", "listIds", "tag", raw("greatest(0, ceil(extract(epoch from (c.send_at - now())) * 1000))::float8 as wait_ms")])
        .where({ company: companyId, id })
        .setLockMode(LockMode.PESSIMISTIC_WRITE)
        .execute<{ state: CampaignState; list_ids: string[]; tag: string | null; wait_ms: number } | null>("get", false);
      if (!row) return undefined;
      if (row.state !== "scheduled") return { state: row.state, waitMs: 0 };
      if (row.wait_ms > 0) return { state: row.state, waitMs: row.wait_ms };
      // One INSERT ... SELECT of the audience: the query builder has no insert from a select, and the rows never pass through the process.
      await em.execute(
        `insert into campaign_recipient (id, company_id, campaign_id, contact_id, email, outcome)
         select gen_random_uuid(), ?, ?, a.contact_id, a.email, a.outcome from ${AUDIENCE}
         on conflict (campaign_id, contact_id) do nothing`,
        [companyId, id, ...audienceValues(companyId, row.list_ids, row.tag)],
      );
      await em.nativeUpdate(CampaignSchema, { company: companyId, id }, { state: "sending", startedAt: raw("now()"), updatedAt: raw("now()") });
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
    if (!isUuid(companyId) || !isUuid(id)) return undefined;
    return this.#fork().transactional(async (em) => {
      const campaign = await em.findOne(
        CampaignSchema,
        { company: companyId, id },
        { fields: ["state", "startedAt", "finishedAt"], lockMode: LockMode.PESSIMISTIC_WRITE },
      );
      if (!campaign) return undefined;
      const state = campaignState(campaign.state);
      // A cancelled campaign's recipients that never got a copy are counted skipped.
      if (state === "cancelled") {
        await em.nativeUpdate(CampaignRecipientSchema, { company: companyId, campaign: id, outcome: "waiting" }, { outcome: "skipped" });
      }
      // Decided on the locked row: a sending (or paused) campaign is sent; an earlier end keeps its time (untouched).
      await em.nativeUpdate(
        CampaignSchema,
        { company: companyId, id },
        {
          state: state === "sending" || state === "paused" ? "sent" : state,
          ...(campaign.finishedAt ? {} : { finishedAt: at }),
          updatedAt: raw("now()"),
        },
      );
      const { counters } = await recipientFigures(em, companyId, id);
      if (campaign.startedAt) {
        const data = {
          campaignId: id,
          accepted: counters.accepted,
          failed: counters.failed,
          suppressed: counters.suppressed,
          skipped: counters.skipped,
          unknown: counters.unknown,
          occurredAt: at.toISOString(),
        };
        await insertOutboxEvents(em, companyId, [{ event: "campaign.sent", occurredAt: at, data, dedupeKey: `campaign:${id}:campaign.sent` }]);
      }
      return counters;
    });
  }

  recordOpen(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(companyId, recipientId, "openedAt", at);
  }

  recordClick(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(companyId, recipientId, "clickedAt", at);
  }

  recordUnsubscribe(companyId: string, recipientId: string, at: Date): Promise<void> {
    return this.#engaged(companyId, recipientId, "unsubscribedAt", at);
  }

  /** The first time only (a conditional update): a later open, click or unsubscribe keeps the first one's time. */
  async #engaged(companyId: string, recipientId: string, column: EngagementColumn, at: Date): Promise<void> {
    if (!isUuid(companyId) || !isUuid(recipientId)) return;
    await this.#fork().nativeUpdate(CampaignRecipientSchema, { company: companyId, id: recipientId, [column]: null }, { [column]: at });
  }
}

/** The campaign, locked until the transaction ends; its counters are not read (zero). */
async function locked(em: EntityManager, companyId: string, id: string): Promise<CampaignRecord | undefined> {
  const row = await em
    .createQueryBuilder(CampaignSchema, "c")
    .select("*")
    .where({ company: companyId, id })
    .setLockMode(LockMode.PESSIMISTIC_WRITE)
    .execute<CampaignRow | null>("get", false);
  return row ? recordOf(row) : undefined;
}

/** The campaign with its counters, in one statement. */
async function read(em: EntityManager, companyId: string, id: string): Promise<CampaignRecord | undefined> {
  const row = await em
    .createQueryBuilder(CampaignSchema, "c")
    .select(["*", raw(COUNTERS)])
    .where({ company: companyId, id })
    .execute<CampaignRow | null>("get", false);
  return row ? recordOf(row) : undefined;
}

/** The campaign's recipients counted per outcome, and those who opened, clicked and unsubscribed, in one grouped read. */
async function recipientFigures(em: EntityManager, companyId: string, campaignId: string): Promise<Omit<CampaignRecipientResults, "startedAt">> {
  const rows = await em
    .createQueryBuilder(CampaignRecipientSchema, "r")
    .select([
      "outcome",
      raw("count(*)::int as n"),
      raw("count(r.opened_at)::int as opened"),
      raw("count(r.clicked_at)::int as clicked"),
      raw("count(r.unsubscribed_at)::int as unsubscribed"),
    ])
    .where({ company: companyId, campaign: campaignId })
    .groupBy("outcome")
    .execute<{ outcome: string; n: number; opened: number; clicked: number; unsubscribed: number }[]>("all", false);
  const sum = (pick: (row: (typeof rows)[number]) => number): number => rows.reduce((total, row) => total + pick(row), 0);
  return {
    counters: countersOf(Object.fromEntries(rows.map((row) => [row.outcome, row.n]))),
    opened: sum((row) => row.opened),
    clicked: sum((row) => row.clicked),
    unsubscribed: sum((row) => row.unsubscribed),
  };
}
