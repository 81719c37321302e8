import { Migration } from "@mikro-orm/migrations";

/**
 * Contacts and contact lists (POST/GET /mail/v1/contacts, ListsService).
 *
 * - One contact per (company, normalised address): the unique index is what
 *   makes concurrent writes of one address create one contact
 *   (`insert ... on conflict do nothing`, then update the winner's row).
 * - The contact list is read newest first with keyset pagination on
 *   (created_at, id); status gets its own ordered index, tags a GIN index,
 *   and `q` (part of the address or name) a pg_trgm GIN index on the one
 *   text the search matches, so a substring search does not scan the table.
 * - Memberships carry company_id so every tenant query starts with it.
 *
 * Every tenant table carries company_id and every btree index a tenant
 * query uses starts with it.
 */
export class Migration20251123010000_contacts extends Migration {
  override up(): void {
    this.addSql(`create extension if not exists pg_trgm`);

    this.addSql(`
      create table contact (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        -- The address as last written (domain in A-label form).
        email text not null,
        -- The matching key: lower-cased, internationalised domain in A-label form.
        email_normalized text not null,
        first_name text null,
        last_name text null,
        company_name text null,
        -- E.164.
        phone text null,
        -- Canonical BCP 47.
        locale text null,
        attributes jsonb not null default '{}',
        tags text[] not null default '{}',
        status text not null check (status in ('subscribed', 'pending', 'unsubscribed', 'suppressed', 'bounced', 'complained')),
        consent_source text null,
        consent_at timestamptz null,
        consent_reference text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create unique index contact_email_index on contact (company_id, email_normalized)`);
    // The contact list: newest first, keyset-paginated on (created_at, id).
    this.addSql(`create index contact_list_index on contact (company_id, created_at desc, id desc)`);
    this.addSql(`create index contact_status_index on contact (company_id, status, created_at desc, id desc)`);
    this.addSql(`create index contact_tags_index on contact using gin (tags)`);
    // q: a substring of the address, first or last name (ILIKE on exactly
    // this expression; see src/adapters/postgres/contacts/contact-queries.ts).
    this.addSql(
      `create index contact_search_index on contact using gin ((email_normalized || ' ' || coalesce(first_name, '') || ' ' || coalesce(last_name, '')) gin_trgm_ops)`,
    );

    this.addSql(`
      create table contact_list (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        name text not null check (char_length(name) between 1 and 100),
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    // One name per company, whatever its case.
    this.addSql(`create unique index contact_list_name_index on contact_list (company_id, lower(name))`);
    this.addSql(`create index contact_list_company_index on contact_list (company_id, created_at, id)`);

    this.addSql(`
      create table contact_list_member (
        company_id uuid not null references company (id) on delete cascade,
        list_id uuid not null references contact_list (id) on delete cascade,
        contact_id uuid not null references contact (id) on delete cascade,
        created_at timestamptz not null default now(),
        primary key (company_id, list_id, contact_id)
      )`);
    // The lists of a page of contacts.
    this.addSql(`create index contact_list_member_contact_index on contact_list_member (company_id, contact_id)`);
  }

  override down(): void {
    this.addSql(`drop table if exists contact_list_member`);
    this.addSql(`drop table if exists contact_list`);
    this.addSql(`drop table if exists contact`);
  }
}
