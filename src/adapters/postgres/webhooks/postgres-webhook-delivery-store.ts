/**
 * Webhook deliveries and their attempts in plain SQL: keyset pages,
 * conditional state moves and the attempt record written with its
 * delivery's update in one transaction. Every statement filters on the
 * caller's company_id.
 */
import type { RecordedErrorClass } from "../../../capabilities/webhooks/delivery-attempt.ts";
import { isDeliveryState } from "../../../capabilities/webhooks/delivery-states.ts";
import type {
  AttemptRecord,
  AttemptResultChange,
  DeliveryFilters,
  DeliveryRecord,
  DeliveryToAttempt,
  EndpointHealthCounts,
  EndpointRecord,
  WebhookDeliveryStore,
} from "../../../capabilities/webhooks/ports.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import { isUuid } from "../ids.ts";
import { type Pool, type PoolClient, toDate } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import type { AuditNote } from "../../../capabilities/audit/types.ts";
import { auditValues } from "../audit/audit-rows.ts";

export type Db = () => Promise<Pool>;

/** A webhook_delivery row as these statements select it (timestamps: see sql.ts). */
export interface DeliveryRow {
  id: string;
  company_id: string;
  endpoint_id: string;
  event_id: string;
  event: string;
  occurred_at: string | Date;
  state: string;
  attempt_count: number;
  last_status: number | null;
  last_error: string | null;
  last_attempt_at: string | Date | null;
  next_attempt_at: string | Date | null;
  created_at: string | Date;
}

export const DELIVERY_COLUMNS = `d.id, d.company_id, d.endpoint_id, d.event_id, d.event, d.occurred_at, d.state, d.attempt_count,
       d.last_status, d.last_error, d.last_attempt_at, d.next_attempt_at, d.created_at`;

/** created_at as UTC text with all six fractional digits: a position a JS Date cannot hold. */
const POSITION = `to_char(d.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function deliveryRecord(row: DeliveryRow): DeliveryRecord {
  if (!isDeliveryState(row.state)) throw new Error(`webhook_delivery ${row.id} has an unknown state ${row.state}`);
  return {
    id: row.id,
    companyId: row.company_id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    event: row.event,
    occurredAt: toDate(row.occurred_at),
    state: row.state,
    attemptCount: row.attempt_count,
    lastStatus: row.last_status,
    lastError: row.last_error,
    lastAttemptAt: toDate(row.last_attempt_at),
    nextAttemptAt: toDate(row.next_attempt_at),
    createdAt: toDate(row.created_at),
  };
}

interface AttemptRow {
  number: number;
  attempted_at: string | Date;
  duration_ms: number;
  status: number | null;
  error_class: string | null;
}

function attemptRecord(row: AttemptRow): AttemptRecord {
  return {
    number: row.number,
    attemptedAt: toDate(row.attempted_at),
    durationMs: row.duration_ms,
    status: row.status,
    errorClass: row.error_class as RecordedErrorClass | null,
  };
}

interface AttemptLoadRow extends DeliveryRow {
  e_url: string;
  e_description: string | null;
  e_events: string[];
  e_enabled: boolean;
  e_secret_sealed: string;
  e_previous_secret_sealed: string | null;
  e_previous_secret_expires_at: string | Date | null;
  e_created_at: string | Date;
  e_updated_at: string | Date;
  data: Record<string, unknown>;
}

/** AttemptLoadRow with the attempt of the asked number (a left join: all null when none was recorded). */
interface AttemptLoadWithEarlierRow extends AttemptLoadRow {
  a_number: number | null;
  a_attempted_at: string | Date | null;
  a_duration_ms: number | null;
  a_status: number | null;
  a_error_class: string | null;
}

/** What an attempt reads: the delivery, its endpoint (with the sealed secrets) and the event's data. */
const ATTEMPT_LOAD_COLUMNS = `${DELIVERY_COLUMNS},
              e.url as e_url, e.description as e_description, e.events as e_events, e.enabled as e_enabled,
              e.secret_sealed as e_secret_sealed, e.previous_secret_sealed as e_previous_secret_sealed,
              e.previous_secret_expires_at as e_previous_secret_expires_at,
              e.created_at as e_created_at, e.updated_at as e_updated_at,
              ev.data`;
const ATTEMPT_LOAD_FROM = `from webhook_delivery d
         join webhook_endpoint e on e.id = d.endpoint_id and e.company_id = d.company_id
         join webhook_event ev on ev.id = d.event_id and ev.company_id = d.company_id`;

function toAttempt(row: AttemptLoadRow): DeliveryToAttempt {
  const endpoint: EndpointRecord = {
    id: row.endpoint_id,
    companyId: row.company_id,
    url: row.e_url,
    description: row.e_description,
    events: row.e_events,
    enabled: row.e_enabled,
    secretSealed: row.e_secret_sealed,
    previousSecretSealed: row.e_previous_secret_sealed,
    previousSecretExpiresAt: toDate(row.e_previous_secret_expires_at),
    createdAt: toDate(row.e_created_at),
    updatedAt: toDate(row.e_updated_at),
  };
  return { delivery: deliveryRecord(row), endpoint, data: row.data };
}

export class PostgresWebhookDeliveryStore implements WebhookDeliveryStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async find(companyId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return null;
    const { rows } = await (await this.#db()).query<DeliveryRow>(
      `select ${DELIVERY_COLUMNS} from webhook_delivery d where d.company_id = $1 and d.id = $2`,
      [companyId, deliveryId],
    );
    return rows[0] ? deliveryRecord(rows[0]) : null;
  }

  /**
   * Newest first, keyset-paginated on (created_at, id), never OFFSET: the
   * row comparison is an index condition of webhook_delivery_list_index or,
   * with an endpoint filter, webhook_delivery_endpoint_index; the other
   * filters narrow the same ordered walk.
   */
  async list(companyId: string, filters: DeliveryFilters, after: KeysetPosition | null, limit: number): Promise<Positioned<DeliveryRecord>[]> {
    if (!isUuid(companyId)) return [];
    if (filters.endpointId !== undefined && !isUuid(filters.endpointId)) return [];
    const values: unknown[] = [companyId];
    const param = (value: unknown): string => {
      values.push(value);
      return `$${values.length}`;
    };
    const where = ["d.company_id = $1"];
    if (filters.endpointId !== undefined) where.push(`d.endpoint_id = ${param(filters.endpointId)}`);
    if (after) where.push(`(d.created_at, d.id) < (${param(after.createdAt)}::timestamptz, ${param(after.id)}::uuid)`);
    if (filters.state !== undefined) where.push(`d.state = ${param(filters.state)}`);
    if (filters.event !== undefined) where.push(`d.event = ${param(filters.event)}`);
    if (filters.since !== undefined) where.push(`d.created_at >= ${param(filters.since)}`);
    if (filters.until !== undefined) where.push(`d.created_at < ${param(filters.until)}`);
    // webhook_event_message_index (company_id, data ->> 'messageId').
    if (filters.messageId !== undefined) {
      where.push(
        `d.event_id in (select ev.id from webhook_event ev
                         where ev.company_id = $1 and ev.data ? 'messageId' and ev.data ->> 'messageId' = ${param(filters.messageId)})`,
      );
    }
    const { rows } = await (await this.#db()).query<DeliveryRow & { position_at: string }>(
      `select ${DELIVERY_COLUMNS}, ${POSITION} as position_at
         from webhook_delivery d
        where ${where.join(" and ")}
        order by d.created_at desc, d.id desc
        limit ${param(limit)}`,
      values,
    );
    return rows.map((row) => ({ item: deliveryRecord(row), position: { createdAt: row.position_at, id: row.id } }));
  }

  async attempts(companyId: string, deliveryId: string): Promise<AttemptRecord[]> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return [];
    const { rows } = await (await this.#db()).query<AttemptRow>(
      `select number, attempted_at, duration_ms, status, error_class
         from webhook_attempt
        where company_id = $1 and delivery_id = $2
        order by number`,
      [companyId, deliveryId],
    );
    return rows.map(attemptRecord);
  }

  async loadForAttempt(companyId: string, deliveryId: string): Promise<DeliveryToAttempt | null> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return null;
    const { rows } = await (await this.#db()).query<AttemptLoadRow>(
      `select ${ATTEMPT_LOAD_COLUMNS}
         ${ATTEMPT_LOAD_FROM}
        where d.company_id = $1 and d.id = $2`,
      [companyId, deliveryId],
    );
    const row = rows[0];
    return row ? toAttempt(row) : null;
  }

  async loadAttempt(
    companyId: string,
    deliveryId: string,
    number: number,
  ): Promise<{ readonly loaded: DeliveryToAttempt; readonly earlier: AttemptRecord | null } | null> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return null;
    const { rows } = await (await this.#db()).query<AttemptLoadWithEarlierRow>(
      `select ${ATTEMPT_LOAD_COLUMNS},
              a.number as a_number, a.attempted_at as a_attempted_at, a.duration_ms as a_duration_ms,
              a.status as a_status, a.error_class as a_error_class
         ${ATTEMPT_LOAD_FROM}
         left join webhook_attempt a on a.delivery_id = d.id and a.company_id = d.company_id and a.number = $3
        where d.company_id = $1 and d.id = $2`,
      [companyId, deliveryId, number],
    );
    const row = rows[0];
    if (!row) return null;
    const earlier =
      row.a_number === null
        ? null
        : attemptRecord({
            number: row.a_number,
            attempted_at: row.a_attempted_at ?? new Date(Number.NaN),
            duration_ms: row.a_duration_ms ?? 0,
            status: row.a_status,
            error_class: row.a_error_class,
          });
    return { loaded: toAttempt(row), earlier };
  }

  async recordAttempt(
    companyId: string,
    deliveryId: string,
    attempt: AttemptRecord,
    change: AttemptResultChange,
  ): Promise<DeliveryRecord | null> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return null;
    return inTransaction(this.#db, async (tx) => {
      // The delivery row first, locked: its state and the attempt are written together.
      const current = await lockedDelivery(tx, companyId, deliveryId);
      if (!current) return null;
      const inserted = await tx.query(
        `insert into webhook_attempt (delivery_id, company_id, number, attempted_at, duration_ms, status, error_class)
         values ($1, $2, $3, $4, $5, $6, $7)
         on conflict (delivery_id, number) do nothing`,
        [deliveryId, companyId, attempt.number, attempt.attemptedAt, attempt.durationMs, attempt.status, attempt.errorClass],
      );
      // Recorded before (a retried activity): the first record stands.
      if (inserted.rowCount === 0) return deliveryRecord(current);
      const { rows } = await tx.query<DeliveryRow>(
        `update webhook_delivery d
            set attempt_count = greatest(d.attempt_count, $3),
                last_status = $4,
                last_error = $5,
                last_attempt_at = $6,
                state = case when d.state = 'succeeded' then d.state else $7 end,
                next_attempt_at = case when d.state = 'succeeded' then null else $8::timestamptz end
          where d.company_id = $1 and d.id = $2
          returning ${DELIVERY_COLUMNS}`,
        [companyId, deliveryId, attempt.number, attempt.status, attempt.errorClass, attempt.attemptedAt, change.state, change.nextAttemptAt],
      );
      return rows[0] ? deliveryRecord(rows[0]) : null;
    });
  }

  async requestRetry(companyId: string, deliveryId: string, at: Date, audit?: AuditNote): Promise<DeliveryRecord | null> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return null;
    // The audit row (when asked) is written by the same statement: it exists exactly when the retry does.
    const { rows } = await (await this.#db()).query<DeliveryRow>(
      `with d as (
         update webhook_delivery d
            set state = 'attempting', retry_requested_at = $3, next_attempt_at = $3
          where d.company_id = $1 and d.id = $2 and d.state = 'dead_letter'
          returning ${DELIVERY_COLUMNS}
       ), audited as (
         insert into audit_event (company_id, occurred_at, actor_kind, actor, action, target_type, target_id, request_id, client_ip, details)
         select $1, $3, $4, $5, $6, 'webhook_delivery', $2, $7, $8, $9::jsonb from d where $4::text is not null
       )
       select * from d`,
      [companyId, deliveryId, at, ...auditValues(audit)],
    );
    return rows[0] ? deliveryRecord(rows[0]) : null;
  }

  async countDeadLetters(companyId: string, endpointId: string, since: Date): Promise<number> {
    if (!isUuid(companyId) || !isUuid(endpointId)) return 0;
    const { rows } = await (await this.#db()).query<{ count: number }>(
      `select count(*)::int as count from webhook_delivery d
        where d.endpoint_id = $2 and d.company_id = $1 and d.state = 'dead_letter' and d.created_at >= $3`,
      [companyId, endpointId, since],
    );
    return rows[0]?.count ?? 0;
  }

  /** webhook_attempt_recent_index (company_id, attempted_at), joined to the deliveries for their endpoint. */
  async healthOf(companyId: string, endpointIds: readonly string[], since: Date): Promise<Map<string, EndpointHealthCounts>> {
    const ids = endpointIds.filter(isUuid);
    const health = new Map<string, EndpointHealthCounts>();
    if (!isUuid(companyId) || ids.length === 0) return health;
    const { rows } = await (await this.#db()).query<{
      endpoint_id: string;
      deliveries: number;
      succeeded: number;
      attempts: number;
      failed_attempts: number;
    }>(
      `select d.endpoint_id,
              count(distinct a.delivery_id)::int as deliveries,
              count(distinct a.delivery_id) filter (where a.status between 200 and 299)::int as succeeded,
              count(*)::int as attempts,
              count(*) filter (where a.status is null or a.status not between 200 and 299)::int as failed_attempts
         from webhook_attempt a
         join webhook_delivery d on d.id = a.delivery_id and d.company_id = a.company_id
        where a.company_id = $1 and a.attempted_at >= $2 and d.endpoint_id = any($3::uuid[])
        group by d.endpoint_id`,
      [companyId, since, ids],
    );
    for (const row of rows) {
      health.set(row.endpoint_id, {
        deliveries: row.deliveries,
        succeeded: row.succeeded,
        attempts: row.attempts,
        failedAttempts: row.failed_attempts,
      });
    }
    return health;
  }

  async requestRetryOfDeadLetters(companyId: string, endpointId: string, since: Date, at: Date, audit?: AuditNote): Promise<number> {
    if (!isUuid(companyId) || !isUuid(endpointId)) return 0;
    // webhook_delivery_dead_letter_index (endpoint_id, created_at) where state = 'dead_letter'.
    // One audit row for the batch (target: the endpoint), by the same statement, when any was retried.
    const { rows } = await (await this.#db()).query<{ count: number }>(
      `with d as (
         update webhook_delivery d
            set state = 'attempting', retry_requested_at = $4, next_attempt_at = $4
          where d.endpoint_id = $2 and d.company_id = $1 and d.state = 'dead_letter' and d.created_at >= $3
          returning d.id
       ), n as (select count(*)::int as count from d), audited as (
         insert into audit_event (company_id, occurred_at, actor_kind, actor, action, target_type, target_id, request_id, client_ip, details)
         select $1, $4, $5, $6, $7, 'webhook_endpoint', $2, $8, $9, $10::jsonb || jsonb_build_object('count', n.count)
           from n where n.count > 0 and $5::text is not null
       )
       select count from n`,
      [companyId, endpointId, since, at, ...auditValues(audit)],
    );
    return rows[0]?.count ?? 0;
  }
}

async function lockedDelivery(tx: PoolClient, companyId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  const { rows } = await tx.query<DeliveryRow>(
    `select ${DELIVERY_COLUMNS} from webhook_delivery d where d.company_id = $1 and d.id = $2 for update`,
    [companyId, deliveryId],
  );
  return rows[0];
}
