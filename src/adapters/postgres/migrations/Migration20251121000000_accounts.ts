import { Migration } from "@mikro-orm/migrations";

/**
 * Companies, their API keys and the rate-limit windows.
 *
 * Written by hand: the SQL here is the schema of record (the entities only
 * mirror it for the ORM).
 */
export class Migration20251121000000_accounts extends Migration {
  override up(): void {
    this.addSql(`
      create table company (
        id uuid primary key default gen_random_uuid(),
        name text not null check (char_length(name) between 1 and 200),
        entitlement_api boolean not null default true,
        entitlement_smtp boolean not null default false,
        created_at timestamptz not null default now()
      )`);

    this.addSql(`
      create table api_key (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        name text not null check (char_length(name) between 1 and 200),
        prefix text not null,
        secret_hash bytea not null,
        scopes text[] not null default '{}',
        created_at timestamptz not null default now(),
        last_used_at timestamptz null,
        expires_at timestamptz null,
        revoked_at timestamptz null,
        replaced_by_id uuid null references api_key (id) on delete set null,
        replaced_at timestamptz null
      )`);
    // Authentication looks a key up by its hash only: one unique index probe.
    this.addSql(`create unique index api_key_secret_hash_unique on api_key (secret_hash)`);
    // Every tenant read filters on company_id; the key table is listed by age.
    this.addSql(`create index api_key_company_created_index on api_key (company_id, created_at)`);

    // Counters of fixed one-minute windows. UNLOGGED: no WAL for a row that
    // changes on every request and is worthless after two minutes; after a
    // crash the table comes back empty, which only resets the current windows.
    this.addSql(`
      create unlogged table rate_limit (
        bucket text not null,
        window_start timestamptz not null,
        count integer not null,
        primary key (bucket, window_start)
      )`);
    // The periodic cleanup deletes by age across all buckets.
    this.addSql(`create index rate_limit_window_start_index on rate_limit (window_start)`);
  }

  override down(): void {
    this.addSql(`drop table if exists rate_limit`);
    this.addSql(`drop table if exists api_key`);
    this.addSql(`drop table if exists company`);
  }
}
