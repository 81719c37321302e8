/**
 * Published events (EventsService) and test events (`mailctl trigger`) into
 * the webhook_event outbox, in plain SQL. The outbox's dedupe key is unique
 * over every company, so the caller's event id is namespaced with the
 * company: two companies' callers may use the same ids.
 */
import type {
  PublishedEventDraft,
  PublishedEventRecorder,
  RecordedPublishedEvent,
  TestEventDraft,
  TestEventRecorder,
} from "../../../capabilities/webhooks/ports.ts";
import { isUuid } from "../ids.ts";
import type { Pool } from "../sql.ts";

export type Db = () => Promise<Pool>;

export function publishedEventDedupeKey(companyId: string, callerEventId: string): string {
  return `published:${companyId}:${callerEventId}`;
}

export class PostgresPublishedEventRecorder implements PublishedEventRecorder {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async record(companyId: string, draft: PublishedEventDraft): Promise<RecordedPublishedEvent> {
    if (!isUuid(companyId)) return { kind: "no_company" };
    const pool = await this.#db();
    const key = publishedEventDedupeKey(companyId, draft.callerEventId);
    const data = JSON.stringify(draft.data);
    // Inserted only for an existing company; a concurrent insert of the same
    // key makes this one wait for it, then do nothing.
    const inserted = await pool.query<{ id: string }>(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       select c.id, $2, $3, $4::jsonb, $5 from company c where c.id = $1
       on conflict (dedupe_key) do nothing
       returning id`,
      [companyId, draft.event, draft.occurredAt, data, key],
    );
    const row = inserted.rows[0];
    if (row) return { kind: "recorded", id: row.id };
    const { rows } = await pool.query<{ id: string; same: boolean }>(
      `select id, (event = $3 and occurred_at = $4 and data = $5::jsonb) as same
         from webhook_event
        where company_id = $1 and dedupe_key = $2`,
      [companyId, key, draft.event, draft.occurredAt, data],
    );
    const earlier = rows[0];
    if (!earlier) return { kind: "no_company" };
    return { kind: earlier.same ? "replayed" : "conflict", id: earlier.id };
  }
}

/**
 * A test event is a row of the outbox like any other, so the live streams
 * hear it through the same notice. Kept from the endpoints, it is written
 * as fanned out already: the relay never makes deliveries of it.
 */
export class PostgresTestEventRecorder implements TestEventRecorder {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async record(companyId: string, draft: TestEventDraft, toEndpoints: boolean): Promise<{ readonly id: string } | null> {
    if (!isUuid(companyId)) return null;
    const { rows } = await (await this.#db()).query<{ id: string }>(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key, fanned_out_at)
       select c.id, $2, $3, $4::jsonb, 'test:' || gen_random_uuid()::text, case when $5::boolean then null else now() end
         from company c where c.id = $1
       returning id`,
      [companyId, draft.event, draft.occurredAt, JSON.stringify(draft.data), toEndpoints],
    );
    return rows[0] ?? null;
  }
}
