import { Migration } from "@mikro-orm/migrations";

/**
 * The built-in email simulator's journal of final handoff answers, so a
 * repeated handoff of the same message (e.g. after a worker crash) is
 * recognised across processes and restarts, as a real service would.
 *
 * No foreign key to message: the simulator stands in for an outside
 * service, whose records do not depend on ours.
 */
export class Migration20251122010000_simulator_journal extends Migration {
  override up(): void {
    this.addSql(`
      create table simulator_handoff (
        message_id uuid primary key,
        outcome text not null check (outcome in ('accepted', 'rejected')),
        provider_message_id text null,
        reason text null,
        created_at timestamptz not null default now()
      )`);
  }

  override down(): void {
    this.addSql(`drop table if exists simulator_handoff`);
  }
}
