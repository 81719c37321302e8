import { Migration } from "@mikro-orm/migrations";

/**
 * Conversions (POST /mail/v1/conversions) and the campaign clicks they are
 * attributed to.
 *
 * - One conversion per (company, eventId): the unique constraint is what
 *   makes concurrent retries of one eventId record one conversion
 *   (`insert ... on conflict do nothing`, then lock the winner's row).
 * - Amounts are numeric(15,4): exact, 4 decimals, at most
 *   99,999,999,999.9999 (the bound the API checks), never a float.
 * - The contact is optional (an address no contact has, a customerRef); a
 *   deleted contact leaves its conversions with the address they had.
 * - campaign_click is the ledger of campaign.click events, one row per
 *   click id. Attribution asks for a contact's latest verified click before
 *   a time, by contact id or by address: one partial index for each,
 *   holding only the verified (not suspect) clicks, newest first.
 * - The revenue report groups a company's attributed conversions by
 *   campaign (conversion_campaign_index).
 *
 * Every tenant table carries company_id and every index a tenant query uses
 * starts with it.
 */
export class Migration20251123020000_conversions extends Migration {
  override up(): void {
    this.addSql(`
      create table conversion (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        event_id text not null,
        event_type text not null check (event_type in ('purchase', 'order_confirmed', 'registration', 'lead', 'booking')),
        contact_id uuid null references contact (id) on delete set null,
        -- The contacts' matching key of the address (lower case), when known.
        email text null,
        customer_ref text null,
        revenue numeric(15, 4) not null check (revenue >= 0),
        currency text not null check (currency ~ '^[A-Z]{3}$'),
        status text not null check (status in ('completed', 'refunded', 'cancelled')),
        refunded_amount numeric(15, 4) not null default 0 check (refunded_amount >= 0),
        occurred_at timestamptz not null,
        metadata jsonb not null default '{}',
        -- The last verified click before occurred_at (attribution); null when none.
        campaign_id text null,
        link_id text null,
        clicked_at timestamptz null,
        -- 1 when recorded, +1 per adjustment: names each change's outbox row.
        version integer not null default 1,
        created_at timestamptz not null default now(),
        updated_at timestamptz not null default now(),
        constraint conversion_refund_within_revenue check (refunded_amount <= revenue),
        constraint conversion_event_index unique (company_id, event_id)
      )`);
    this.addSql(`create index conversion_campaign_index on conversion (company_id, campaign_id) where campaign_id is not null`);

    this.addSql(`
      create table campaign_click (
        id uuid primary key default gen_random_uuid(),
        company_id uuid not null references company (id) on delete cascade,
        -- The caller's stable id of the click (the campaign.click event id).
        click_id text not null,
        campaign_id text not null,
        link_id text not null,
        recipient_id text null,
        -- No foreign key: the ledger keeps what the event said, whatever happens to the contact.
        contact_id uuid null,
        -- The contacts' matching key of the address (lower case).
        email text null,
        suspect boolean not null default false,
        occurred_at timestamptz not null,
        created_at timestamptz not null default now(),
        constraint campaign_click_who check (contact_id is not null or email is not null),
        constraint campaign_click_id_index unique (company_id, click_id)
      )`);
    this.addSql(
      `create index campaign_click_contact_index on campaign_click (company_id, contact_id, occurred_at desc)
        where contact_id is not null and not suspect`,
    );
    this.addSql(
      `create index campaign_click_email_index on campaign_click (company_id, email, occurred_at desc)
        where email is not null and not suspect`,
    );
  }

  override down(): void {
    this.addSql(`drop table if exists campaign_click`);
    this.addSql(`drop table if exists conversion`);
  }
}
