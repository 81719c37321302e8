import { Migration } from "@mikro-orm/migrations";

/**
 * The webhook outbox relay (src/adapters/temporal/webhooks/dispatcher.ts)
 * wakes on a notice instead of waiting for its next polling pass: channel mail_webhook_work is NOTIFYed on commit when there is
 * work for it, whoever wrote it (the API's EventsService, a worker's
 * lifecycle activity, an operator's SQL):
 *
 * - events recorded in webhook_event (once per statement: a batch of a
 *   thousand events is one notice);
 * - a manual retry recorded on a delivery (retry_requested_at set; the
 *   relay's own clearing of it notifies nothing).
 *
 * No payload: the relay runs a pass, which finds the work itself. The
 * polling pass stays as the fallback for a notice lost with a connection.
 */
export class Migration20251201000000_webhook_work_notices extends Migration {
  override up(): void {
    this.addSql(`
      create function webhook_event_webhook_event_work_notice_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_webhook_work', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger webhook_event_work_notice
        after insert on webhook_event
        for each statement execute function webhook_event_webhook_event_work_notice_fn()`);
    this.addSql(`
      create function webhook_delivery_webhook_delivery_retry_notice_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_webhook_work', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger webhook_delivery_retry_notice
        after update of retry_requested_at on webhook_delivery
        for each row when (new.retry_requested_at is not null)
        execute function webhook_delivery_webhook_delivery_retry_notice_fn()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists webhook_delivery_retry_notice on webhook_delivery`);
    this.addSql(`drop function if exists webhook_delivery_webhook_delivery_retry_notice_fn()`);
    this.addSql(`drop trigger if exists webhook_event_work_notice on webhook_event`);
    this.addSql(`drop function if exists webhook_event_webhook_event_work_notice_fn()`);
  }
}
