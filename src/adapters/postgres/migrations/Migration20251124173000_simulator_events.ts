import { Migration } from "@mikro-orm/migrations";

/**
 * The built-in email simulator's pending outcomes (delivered, bounced,
 * complained), written with the accepted handoff and reported when due by
 * whichever process polls first, so a worker that dies before an outcome
 * is reported does not lose it.
 *
 * No foreign key to message: the simulator stands in for an outside
 * service, whose records do not depend on ours.
 */
export class Migration20251124173000_simulator_events extends Migration {
  override up(): void {
    this.addSql(`
      create table simulator_event (
        provider_event_id text primary key,
        provider_message_id text not null,
        position integer not null,
        type text not null check (type in ('delivered', 'bounced', 'complained')),
        detail text null,
        due_at timestamptz not null,
        attempts integer not null default 0,
        claimed_until timestamptz null,
        done_at timestamptz null,
        dropped boolean not null default false,
        created_at timestamptz not null default now()
      )`);
    // A message's events are reported in this order.
    this.addSql(`create unique index simulator_event_order_index on simulator_event (provider_message_id, position)`);
    // The poller's scan: only what is still to report.
    this.addSql(`create index simulator_event_due_index on simulator_event (due_at) where done_at is null`);
  }

  override down(): void {
    this.addSql(`drop table if exists simulator_event`);
  }
}
