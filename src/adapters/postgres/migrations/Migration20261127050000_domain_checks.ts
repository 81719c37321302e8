import { Migration } from "@mikro-orm/migrations";

/**
 * Sending domains keep each record as the last check saw it (`dns_check`)
 * and when they were first verified (`verified_at`): a domain verified once
 * stays sendable, and a record lost later makes it `degraded`. Domains
 * verified before this column existed are verified from their last check
 * (or their creation, when overridden).
 */
export class Migration20261127050000_domain_checks extends Migration {
  override up(): void {
    this.addSql(`alter table "sending_domain" add "dns_check" jsonb null, add "verified_at" timestamptz null`);
    this.addSql(
      `update "sending_domain" set "verified_at" = coalesce("last_checked_at", "created_at") where "verification_overridden" or ("dkim_verified" and "spf_verified" and "dmarc_verified")`,
    );
  }

  override down(): void {
    this.addSql(`alter table "sending_domain" drop column "dns_check", drop column "verified_at"`);
  }
}
