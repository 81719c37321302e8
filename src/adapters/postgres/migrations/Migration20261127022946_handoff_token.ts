import { Migration } from "@mikro-orm/migrations";

/**
 * message.handoff_token: whose handoff lease it is. The attempt that claims
 * the lease gets a random token stored with it, and renewing or letting go
 * of the lease is conditional on that token, so an attempt that stalled
 * past its lease can neither extend nor clear the lease of the attempt that
 * took over (which may be at the relay: clearing its lease would let a third
 * attempt send a second copy). Nullable without a default: adding it
 * rewrites nothing.
 */
export class Migration20261127022946_handoff_token extends Migration {
  override up(): void {
    this.addSql(`alter table "message" add "handoff_token" uuid null`);
  }

  override down(): void {
    this.addSql(`alter table "message" drop column "handoff_token"`);
  }
}
