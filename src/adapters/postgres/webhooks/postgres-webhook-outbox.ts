/**
 * The webhook outbox in plain SQL: fan-out from webhook_event to
 * webhook_delivery, and the relay's work lists (deliveries whose workflow is
 * not started, retry requests not yet passed on). These statements span
 * companies on purpose: they run in the service's own relay, never on a
 * caller's behalf; each one keeps the company of the rows it moves.
 */
import type { DeliveryToDispatch, WebhookOutbox } from "../../../capabilities/webhooks/ports.ts";
import { isUuid } from "../ids.ts";
import type { Pool } from "../sql.ts";

export type Db = () => Promise<Pool>;

interface DispatchRow {
  id: string;
  company_id: string;
  endpoint_id: string;
  event: string;
  attempt_count: number;
  retry_request: string | null;
}

const DISPATCH_COLUMNS = `d.id, d.company_id, d.endpoint_id, d.event, d.attempt_count,
       to_char(d.retry_requested_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as retry_request`;

function dispatchable(row: DispatchRow): DeliveryToDispatch {
  return {
    id: row.id,
    companyId: row.company_id,
    endpointId: row.endpoint_id,
    event: row.event,
    attemptCount: row.attempt_count,
    retryRequest: row.retry_request,
  };
}

export class PostgresWebhookOutbox implements WebhookOutbox {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  /**
   * One statement, so one transaction: take the oldest events not fanned
   * out (skipping rows another relay holds), insert a delivery per matching
   * endpoint (unique on event and endpoint: a repeated fan-out adds
   * nothing), mark the events. An endpoint gets the events recorded after
   * it was created, of the kinds it subscribed to, while it is enabled.
   */
  async fanOut(limit: number): Promise<number> {
    const result = await (await this.#db()).query(
      `with taken as (
         select ev.id, ev.company_id, ev.event, ev.occurred_at, ev.created_at
           from webhook_event ev
          where ev.fanned_out_at is null
          order by ev.created_at
          limit $1
          for update skip locked
       ), made as (
         insert into webhook_delivery (company_id, endpoint_id, event_id, event, occurred_at)
         select t.company_id, e.id, t.id, t.event, t.occurred_at
           from taken t
           join webhook_endpoint e
             on e.company_id = t.company_id and e.enabled and t.event = any (e.events) and e.created_at <= t.created_at
          order by t.created_at, e.created_at
         on conflict (event_id, endpoint_id) do nothing
       )
       update webhook_event w
          set fanned_out_at = now()
         from taken t
        where w.id = t.id`,
      [limit],
    );
    return result.rowCount ?? 0;
  }

  async unstarted(limit: number, minAgeMs: number): Promise<DeliveryToDispatch[]> {
    const { rows } = await (await this.#db()).query<DispatchRow>(
      `select ${DISPATCH_COLUMNS}
         from webhook_delivery d
        where d.workflow_started_at is null and d.created_at <= now() - make_interval(secs => $2::double precision / 1000)
        order by d.created_at
        limit $1`,
      [limit, minAgeMs],
    );
    return rows.map(dispatchable);
  }

  async markWorkflowStarted(companyId: string, deliveryId: string): Promise<void> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return;
    await (await this.#db()).query(
      `update webhook_delivery set workflow_started_at = now() where company_id = $1 and id = $2 and workflow_started_at is null`,
      [companyId, deliveryId],
    );
  }

  async retryRequests(limit: number): Promise<DeliveryToDispatch[]> {
    const { rows } = await (await this.#db()).query<DispatchRow>(
      `select ${DISPATCH_COLUMNS}
         from webhook_delivery d
        where d.retry_requested_at is not null
        order by d.retry_requested_at
        limit $1`,
      [limit],
    );
    return rows.map(dispatchable);
  }

  async clearRetryRequest(companyId: string, deliveryId: string, retryRequest: string): Promise<void> {
    if (!isUuid(companyId) || !isUuid(deliveryId)) return;
    await (await this.#db()).query(
      `update webhook_delivery set retry_requested_at = null
        where company_id = $1 and id = $2 and retry_requested_at = $3::timestamptz`,
      [companyId, deliveryId, retryRequest],
    );
  }
}
