import { Migration } from "@mikro-orm/migrations";

/**
 * Store integrations (IntegrationsService: the WordPress / WooCommerce
 * plugin) and the orders they push.
 *
 * - store_integration: one per (company, provider, site_url): reconnecting a
 *   site finds the integration it has (unique constraint + `on conflict`).
 * - store_order: one per (integration, store order id): the unique
 *   constraint makes concurrent pushes of one order record it once; the
 *   winner's row is then locked (`for update`) so pushes apply in turn.
 *   `payload` is the order as last pushed; `version` +1 per change names
 *   each change's `order.event` outbox row. The contact is optional (an
 *   order without a usable address) and survives its contact's deletion.
 *
 * Every tenant table carries company_id and every index a tenant query uses
 * starts with it.
 */
export class Migration20251123040000_integrations extends Migration {
  override up(): void {
    this.addSql(`
      create table store_integration (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        provider text not null check (provider in ('woocommerce')),
        site_url text not null,
        created_at timestamptz not null default now(),
        constraint store_integration_site_index unique (company_id, provider, site_url)
      )`);
    this.addSql(`
      create table store_order (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        integration_id uuid not null references store_integration (id) on delete cascade,
        store_order_id text not null,
        status text not null,
        paid boolean not null,
        payload jsonb not null,
        contact_id uuid null references contact (id) on delete set null,
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint store_order_index unique (integration_id, store_order_id)
      )`);
    this.addSql(`create index store_order_company_index on store_order (company_id, created_at, id)`);
  }

  override down(): void {
    this.addSql(`drop table if exists store_order`);
    this.addSql(`drop table if exists store_integration`);
  }
}
