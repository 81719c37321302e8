import { Migration } from "@mikro-orm/migrations";

/**
 * The live event streams (`mailctl listen`, WebhooksService.StreamEvents)
 * hear which outbox events were committed, in whichever process they were
 * recorded: channel mail_webhook_live is NOTIFYed once per inserting
 * statement with the company id and the ids of the rows it inserted (a
 * notice per company and 100 ids, under the 8000-byte payload limit). The
 * API process holding a company's stream reads those rows back by company
 * and id (src/adapters/postgres/webhooks/live-event-feed.ts).
 */
export class Migration20261127032000_webhook_live_notices extends Migration {
  override up(): void {
    this.addSql(`create or replace function webhook_event_webhook_event_live_notice_fn() returns trigger language plpgsql as $$ begin
 perform pg_notify('mail_webhook_live', n.company_id::text || ' ' || string_agg(n.id::text, ' '))
   from (select company_id, id, (row_number() over (partition by company_id) - 1) / 100 as chunk from inserted_events) n
  group by n.company_id, n.chunk;  return null; end; $$`);
    this.addSql(`create trigger webhook_event_live_notice after insert on webhook_event referencing new table as inserted_events
 for each statement execute function webhook_event_webhook_event_live_notice_fn()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists "webhook_event_live_notice" on "webhook_event"`);
    this.addSql(`drop function if exists "webhook_event_webhook_event_live_notice_fn"()`);
  }
}
