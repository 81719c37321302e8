import { Migration } from "@mikro-orm/migrations";

/**
 * Webhooks: their bounds, and the administration screen's needs:
 *
 * - attempts record `timeout`, `network` or `endpoint_disabled` only: the
 *   finer classes recorded before (connection_refused, tls_error,
 *   host_not_allowed, ...) are folded into `network` (`timeout` stays), on
 *   attempts and on their deliveries' last_error;
 * - an endpoint's health over the last 24 hours reads attempts by time;
 * - the deliveries a message caused are found through their events' messageId.
 */
export class Migration20251128000000_webhook_bounds extends Migration {
  override up(): void {
    this.addSql(`update webhook_attempt set error_class = 'network' where error_class not in ('timeout', 'network', 'endpoint_disabled')`);
    this.addSql(`update webhook_delivery set last_error = 'network' where last_error not in ('timeout', 'network', 'endpoint_disabled')`);
    this.addSql(`create index webhook_attempt_recent_index on webhook_attempt (company_id, attempted_at)`);
    this.addSql(`create index webhook_event_message_index on webhook_event (company_id, (data ->> 'messageId')) where data ? 'messageId'`);
  }

  override down(): void {
    this.addSql(`drop index if exists webhook_event_message_index`);
    this.addSql(`drop index if exists webhook_attempt_recent_index`);
  }
}
