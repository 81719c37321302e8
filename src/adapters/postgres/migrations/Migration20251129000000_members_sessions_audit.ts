import { Migration } from "@mikro-orm/migrations";

/**
 * Company members, their one-time sign-in links and server-side sessions,
 * the audit log, and who created each API key.
 *
 * Secrets are never stored: a link's token and a session's cookie value are
 * 32 random bytes of which only SHA-256 is kept (`token_hash`,
 * `secret_hash`). Removing a member deletes their links and sessions with
 * them (cascade); audit rows keep the actor's label as text, so they outlive
 * the member (kept 400 days by a periodic delete).
 */
export class Migration20251129000000_members_sessions_audit extends Migration {
  override up(): void {
    this.addSql(`
      create table member (
        id uuid not null default gen_random_uuid() primary key,
        company_id uuid not null,
        email text not null,
        display_name text not null default '',
        role text not null check (role in ('owner', 'admin', 'member')),
        created_at timestamptz not null default now(),
        last_sign_in_at timestamptz null,
        disabled_at timestamptz null,
        last_link_emailed_at timestamptz null,
        constraint member_company_id_fkey foreign key (company_id) references company (id) on delete cascade
      )`);
    this.addSql(`alter table member add constraint member_company_email_unique unique (company_id, email)`);

    this.addSql(`
      create table sign_in_link (
        id uuid not null default gen_random_uuid() primary key,
        company_id uuid not null,
        member_id uuid not null,
        token_hash bytea not null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        used_at timestamptz null,
        constraint sign_in_link_member_id_fkey foreign key (member_id) references member (id) on delete cascade
      )`);
    this.addSql(`alter table sign_in_link add constraint sign_in_link_token_hash_unique unique (token_hash)`);
    this.addSql(`create index sign_in_link_member_index on sign_in_link (member_id)`);

    this.addSql(`
      create table member_session (
        id uuid not null default gen_random_uuid() primary key,
        company_id uuid not null,
        member_id uuid not null,
        secret_hash bytea not null,
        created_at timestamptz not null default now(),
        last_seen_at timestamptz not null default now(),
        expires_at timestamptz not null,
        constraint member_session_member_id_fkey foreign key (member_id) references member (id) on delete cascade
      )`);
    this.addSql(`alter table member_session add constraint member_session_secret_hash_unique unique (secret_hash)`);
    this.addSql(`create index member_session_member_index on member_session (member_id)`);

    this.addSql(`
      create table audit_event (
        id uuid not null default gen_random_uuid() primary key,
        company_id uuid not null,
        occurred_at timestamptz not null default now(),
        actor_kind text not null check (actor_kind in ('member', 'api_key', 'operator')),
        actor text not null,
        action text not null,
        target_type text not null,
        target_id text not null,
        request_id text not null default '',
        client_ip text not null default '',
        details jsonb not null default '{}',
        constraint audit_event_company_id_fkey foreign key (company_id) references company (id) on delete cascade
      )`);
    this.addSql(`create index audit_event_company_time_index on audit_event (company_id, occurred_at, id)`);
    this.addSql(`create index audit_event_time_index on audit_event (occurred_at)`);

    this.addSql(`alter table api_key add column created_by text not null default ''`);
  }

  override down(): void {
    this.addSql(`alter table api_key drop column if exists created_by`);
    this.addSql(`drop table if exists audit_event`);
    this.addSql(`drop table if exists member_session`);
    this.addSql(`drop table if exists sign_in_link`);
    this.addSql(`drop table if exists member`);
  }
}
