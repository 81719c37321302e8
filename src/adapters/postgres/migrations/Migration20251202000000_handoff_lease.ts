import { Migration } from "@mikro-orm/migrations";

/**
 * message.handoff_until: the lease of the attempt that is handing the
 * message to the email service. Until then that attempt
 * may still be talking to the relay, so no other attempt sends the message
 * (a second copy at the relay); the attempt renews it while it runs, and
 * lets it go when the relay did not take the message. Nullable without a
 * default: adding it rewrites nothing.
 */
export class Migration20251202000000_handoff_lease extends Migration {
  override up(): void {
    this.addSql(`alter table message add column handoff_until timestamptz null`);
  }

  override down(): void {
    this.addSql(`alter table message drop column handoff_until`);
  }
}
