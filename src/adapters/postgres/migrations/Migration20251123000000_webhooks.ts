import { Migration } from "@mikro-orm/migrations";

/**
 * Signed webhooks: endpoints (with sealed secrets), one delivery per
 * (event, endpoint) and every attempt of it, plus the fan-out marker on the
 * webhook_event outbox.
 *
 * Every tenant table carries company_id and every index a tenant query uses
 * starts with it. Response bodies are stored nowhere (spec, Delivery rules 6).
 */
export class Migration20251123000000_webhooks extends Migration {
  override up(): void {
    this.addSql(`
      create table webhook_endpoint (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        url text not null,
        description text null,
        events text[] not null,
        enabled boolean not null default true,
        -- AES-256-GCM sealed (src/capabilities/sending-setup/key-sealing.ts),
        -- bound to the endpoint; never plain text.
        secret_sealed text not null,
        -- The secret before the latest rotation; it signs too until previous_secret_expires_at.
        previous_secret_sealed text null,
        previous_secret_expires_at timestamptz null,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now()
      )`);
    this.addSql(`create index webhook_endpoint_company_index on webhook_endpoint (company_id, created_at)`);

    // Outbox marker: null until the event's deliveries exist.
    this.addSql(`alter table webhook_event add column fanned_out_at timestamptz null`);
    this.addSql(`create index webhook_event_unfanned_index on webhook_event (created_at) where fanned_out_at is null`);

    this.addSql(`
      create table webhook_delivery (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        endpoint_id uuid not null references webhook_endpoint (id) on delete cascade,
        event_id uuid not null references webhook_event (id) on delete cascade,
        event text not null,
        occurred_at timestamptz not null,
        state text not null default 'pending' check (state in ('pending', 'attempting', 'succeeded', 'dead_letter')),
        attempt_count integer not null default 0,
        last_status integer null,
        last_error text null,
        last_attempt_at timestamptz null,
        next_attempt_at timestamptz null,
        created_at timestamptz not null default now(),
        -- Outbox marker: null until the delivery's workflow is known to exist.
        workflow_started_at timestamptz null,
        -- Set by a manual retry until the workflow has been told.
        retry_requested_at timestamptz null,
        -- One delivery of an event per endpoint, however often fan-out runs.
        unique (event_id, endpoint_id)
      )`);
    // The deliveries list: newest first, keyset-paginated on (created_at, id), per company or per endpoint.
    this.addSql(`create index webhook_delivery_list_index on webhook_delivery (company_id, created_at desc, id desc)`);
    this.addSql(`create index webhook_delivery_endpoint_index on webhook_delivery (company_id, endpoint_id, created_at desc, id desc)`);
    // "Retry every dead letter of an endpoint since ...".
    this.addSql(`create index webhook_delivery_dead_letter_index on webhook_delivery (endpoint_id, created_at) where state = 'dead_letter'`);
    // The relay's work lists.
    this.addSql(`create index webhook_delivery_unstarted_index on webhook_delivery (created_at) where workflow_started_at is null`);
    this.addSql(`create index webhook_delivery_retry_index on webhook_delivery (retry_requested_at) where retry_requested_at is not null`);

    this.addSql(`
      create table webhook_attempt (
        delivery_id uuid not null references webhook_delivery (id) on delete cascade,
        -- Copied from the delivery for tenant-scoped reads; the delivery's cascade removes the rows.
        company_id uuid not null,
        number integer not null check (number >= 1),
        attempted_at timestamptz not null,
        duration_ms integer not null,
        -- The HTTP status the receiver answered; null when it gave none.
        status integer null,
        -- Why there was no status (timeout, connection_refused, ...).
        error_class text null,
        primary key (delivery_id, number)
      )`);
  }

  override down(): void {
    this.addSql(`drop table if exists webhook_attempt`);
    this.addSql(`drop table if exists webhook_delivery`);
    this.addSql(`drop index if exists webhook_event_unfanned_index`);
    this.addSql(`alter table webhook_event drop column if exists fanned_out_at`);
    this.addSql(`drop table if exists webhook_endpoint`);
  }
}
