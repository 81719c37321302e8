import { Migration } from "@mikro-orm/migrations";

/**
 * The hosted sign-up door:
 *
 * - signup_form_token_use: each form token is taken once (its MAC, the
 *   form it belongs to, when it was taken); rows older than the token's
 *   2 hours are deleted as new ones come in;
 * - signup_confirmation_hour: the confirmation emails of a company per
 *   hour, counted and capped in one statement (CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR);
 * - sending_pace_company: per provider and company, when the company last
 *   got a slot of the sending pace and since when it waits for one, so the
 *   next slot goes to the company served least recently (fair between tenants).
 */
export class Migration20251127000000_signup_door extends Migration {
  override up(): void {
    this.addSql(`
      create table signup_form_token_use (
        token_mac text primary key,
        form_id uuid not null,
        used_at timestamptz not null
      )`);
    this.addSql(`create index signup_form_token_use_used_at_index on signup_form_token_use (used_at)`);
    this.addSql(`
      create table signup_confirmation_hour (
        company_id uuid not null,
        hour_start timestamptz not null,
        sent integer not null,
        primary key (company_id, hour_start)
      )`);
    this.addSql(`
      create table sending_pace_company (
        provider text not null,
        company_id uuid not null,
        last_served_at timestamptz null,
        waiting_since timestamptz null,
        asked_at timestamptz not null,
        primary key (provider, company_id)
      )`);
  }

  override down(): void {
    this.addSql(`drop table if exists sending_pace_company`);
    this.addSql(`drop table if exists signup_confirmation_hour`);
    this.addSql(`drop table if exists signup_form_token_use`);
  }
}
