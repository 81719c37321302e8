import { Migration } from "@mikro-orm/migrations";

/**
 * Sign-up forms (GET /mail/v1/forms; created and deactivated by operators
 * through AdminService).
 *
 * - public_id is the form's address on the hosted page
 *   (`/mail/v1/forms/{publicId}`): unique over every company, since the
 *   hosted page is reached without an API key.
 * - fields is the form's design, a JSON array of
 *   {name, label, type, required, options} checked by the capability.
 * - A form is never deleted: deactivated (active = false) it leaves the list
 *   and stops accepting sign-ups, while the contacts it created keep naming
 *   it as their consent source.
 * - consent_version counts changes of the consent text: the evidence a
 *   sign-up records names the version the visitor saw.
 *
 * Every tenant query filters on company_id; the list of active forms uses
 * signup_form_active_index.
 */
export class Migration20251123030000_forms extends Migration {
  override up(): void {
    this.addSql(`
      create table signup_form (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        public_id text not null check (public_id ~ '^[A-Za-z0-9_-]{8,64}$'),
        name text not null check (char_length(name) between 1 and 200),
        fields jsonb not null,
        consent_text text not null,
        consent_version integer not null default 1,
        double_opt_in boolean not null,
        language text not null,
        active boolean not null default true,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint signup_form_public_id_key unique (public_id)
      )`);
    this.addSql(`create index signup_form_active_index on signup_form (company_id, created_at, id) where active`);
  }

  override down(): void {
    this.addSql(`drop table if exists signup_form`);
  }
}
