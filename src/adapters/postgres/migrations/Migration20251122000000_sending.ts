import { Migration } from "@mikro-orm/migrations";

/**
 * Sending: domains and senders, templates, credits, suppressions, messages
 * with their events, the webhook event outbox, idempotency records and the
 * shared sending pace.
 *
 * Every tenant table carries company_id and every index a tenant query uses
 * starts with it.
 */
export class Migration20251122000000_sending extends Migration {
  override up(): void {
    this.addSql(`
      create table sending_domain (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        domain text not null,
        return_path_domain text not null,
        dkim_selector text not null,
        dkim_public_key text not null,
        -- AES-256-GCM sealed PEM (see src/capabilities/sending-setup); never plain text.
        dkim_private_key_sealed text not null,
        dkim_verified boolean not null default false,
        spf_verified boolean not null default false,
        dmarc_verified boolean not null default false,
        verification_overridden boolean not null default false,
        last_checked_at timestamptz null,
        created_at timestamptz not null default now(),
        unique (company_id, domain)
      )`);

    this.addSql(`
      create table sender (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        domain_id uuid not null references sending_domain (id) on delete cascade,
        email text not null,
        name text null,
        is_default boolean not null default false,
        created_at timestamptz not null default now(),
        unique (company_id, email)
      )`);
    this.addSql(`create unique index sender_one_default_per_company on sender (company_id) where is_default`);

    this.addSql(`
      create table template (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        name text not null check (char_length(name) between 1 and 200),
        subject text not null,
        html text not null,
        text_body text null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        unique (company_id, name)
      )`);

    this.addSql(`
      create table credit_wallet (
        company_id uuid primary key references company (id) on delete cascade,
        balance bigint not null default 0 check (balance >= 0),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`
      create table credit_ledger (
        id bigserial primary key,
        company_id uuid not null references company (id) on delete cascade,
        delta bigint not null,
        reason text not null check (reason in ('grant', 'adjustment', 'charge', 'refund')),
        message_id uuid null,
        note text not null default '',
        created_at timestamptz not null default now()
      )`);
    // A message is charged at most once and refunded at most once.
    this.addSql(`create unique index credit_ledger_once_per_message on credit_ledger (message_id, reason) where message_id is not null`);
    this.addSql(`create index credit_ledger_company_index on credit_ledger (company_id, id desc)`);

    this.addSql(`
      create table suppression (
        company_id uuid not null references company (id) on delete cascade,
        email text not null,
        reason text not null check (reason in ('bounce', 'complaint', 'manual')),
        message_id uuid null,
        created_at timestamptz not null default now(),
        primary key (company_id, email)
      )`);

    this.addSql(`
      create table message (
        id uuid primary key,
        company_id uuid not null references company (id) on delete cascade,
        api_key_id uuid null references api_key (id) on delete set null,
        idempotency_key text null,
        recipient text not null,
        recipient_name text null,
        recipient_domain text not null,
        sender_id uuid null references sender (id) on delete set null,
        from_email text not null,
        from_name text null,
        reply_to text null,
        subject text not null,
        html text null,
        text_body text null,
        template_id uuid null,
        tags jsonb not null default '{}',
        status text not null,
        error_code text null,
        provider text null,
        provider_message_id text null,
        created_at timestamptz not null default now(),
        sent_at timestamptz null,
        last_event_at timestamptz null,
        -- Outbox marker: null until the message's workflow is known to exist.
        workflow_started_at timestamptz null,
        unique (company_id, idempotency_key)
      )`);
    // The message log: newest first, keyset-paginated on (created_at, id).
    this.addSql(`create index message_log_index on message (company_id, created_at desc, id desc)`);
    this.addSql(`create index message_log_status_index on message (company_id, status, created_at desc, id desc)`);
    // jsonb_ops (the default class) answers `tags ? key`, the tag filter of the log.
    this.addSql(`create index message_tags_index on message using gin (tags)`);
    // The relay finds messages whose workflow was never started.
    this.addSql(`create index message_unstarted_index on message (created_at) where workflow_started_at is null`);
    this.addSql(`create unique index message_provider_id_index on message (provider, provider_message_id) where provider_message_id is not null`);

    this.addSql(`
      create table message_event (
        id bigserial primary key,
        message_id uuid not null references message (id) on delete cascade,
        company_id uuid not null,
        type text not null,
        at timestamptz not null,
        provider_event_id text null,
        detail text null
      )`);
    this.addSql(`create index message_event_message_index on message_event (message_id, at, id)`);
    this.addSql(`create unique index message_event_provider_event_index on message_event (provider_event_id) where provider_event_id is not null`);
    // One lifecycle event of each kind per message (sent, failed, ...): a
    // retried activity cannot record it twice.
    this.addSql(`create unique index message_event_once_index on message_event (message_id, type) where provider_event_id is null`);

    // Events for webhook delivery (the outbox the webhook issue drains).
    this.addSql(`
      create table webhook_event (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        event text not null,
        occurred_at timestamptz not null,
        data jsonb not null,
        -- Makes recording idempotent, e.g. 'message:<id>:sent'.
        dedupe_key text not null unique,
        created_at timestamptz not null default now()
      )`);
    this.addSql(`create index webhook_event_company_index on webhook_event (company_id, created_at)`);

    this.addSql(`
      create table idempotency_record (
        api_key_id uuid not null references api_key (id) on delete cascade,
        idempotency_key text not null,
        rpc text not null,
        request_hash bytea not null,
        state text not null check (state in ('in_progress', 'completed')),
        response bytea null,
        response_headers jsonb null,
        error_code text null,
        error_message text null,
        created_at timestamptz not null default now(),
        expires_at timestamptz not null,
        primary key (api_key_id, idempotency_key)
      )`);
    this.addSql(`create index idempotency_record_expiry_index on idempotency_record (expires_at)`);

    // Token bucket of each provider's sending pace, shared by all workers.
    this.addSql(`
      create table sending_pace (
        provider text primary key,
        tokens double precision not null,
        updated_at timestamptz not null
      )`);
  }

  override down(): void {
    for (const table of [
      "sending_pace",
      "idempotency_record",
      "webhook_event",
      "message_event",
      "message",
      "suppression",
      "credit_ledger",
      "credit_wallet",
      "template",
      "sender",
      "sending_domain",
    ]) {
      this.addSql(`drop table if exists ${table}`);
    }
  }
}
