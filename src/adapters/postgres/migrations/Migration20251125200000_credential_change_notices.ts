import { Migration } from "@mikro-orm/migrations";

/**
 * API processes cache key lookups for a few seconds
 * (src/capabilities/accounts/cached-credentials.ts). Every committed change
 * that may refuse a key NOTIFYs them, whoever makes it: a key revoked,
 * expiring, rotated, renamed, re-scoped or deleted; a company's name or
 * entitlements changed, or the company deleted. The "last used" batches
 * (only last_used_at) notify nothing. One channel and no payload: the
 * listeners forget everything (such changes are rare), and notifications of
 * one transaction are folded into one.
 */
export class Migration20251125200000_credential_change_notices extends Migration {
  override up(): void {
    // Function names follow MikroORM's convention (<table>_<trigger>_fn), which its schema reader expects.
    this.addSql(`
      create function api_key_api_key_credentials_changed_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_credentials_changed', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger api_key_credentials_changed
        after update of company_id, name, prefix, secret_hash, scopes, expires_at, revoked_at or delete on api_key
        for each statement execute function api_key_api_key_credentials_changed_fn()`);
    this.addSql(`
      create function company_company_credentials_changed_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_credentials_changed', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger company_credentials_changed
        after update of name, entitlement_api, entitlement_smtp or delete on company
        for each statement execute function company_company_credentials_changed_fn()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists company_credentials_changed on company`);
    this.addSql(`drop function if exists company_company_credentials_changed_fn()`);
    this.addSql(`drop trigger if exists api_key_credentials_changed on api_key`);
    this.addSql(`drop function if exists api_key_api_key_credentials_changed_fn()`);
  }
}
