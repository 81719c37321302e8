import { Migration } from "@mikro-orm/migrations";

/**
 * Campaign tracking (src/capabilities/tracking; docs/tracking.md): the
 * campaign copies the tokens are bound to (tracking_recipient), each
 * campaign's links, the only URLs a click redirects to (tracking_link),
 * every click and open request with the suspect rules' verdict
 * (tracking_hit) and the first open / verified click per link /
 * unsubscribe of a recipient, which publish their events once
 * (tracking_first).
 */
export class Migration20261127043711_tracking extends Migration {
  override up(): void {
    this.addSql(`create table "tracking_first" ("company_id" uuid not null, "recipient_id" uuid not null, "kind" text not null, "link_id" text not null, "campaign_id" text not null, "occurred_at" timestamptz not null, primary key ("company_id", "recipient_id", "kind", "link_id"))`);
    this.addSql(`create index "tracking_first_campaign_index" on "tracking_first" ("company_id", "campaign_id", "kind")`);
    this.addSql(`create table "tracking_hit" ("id" uuid not null, "company_id" uuid not null, "campaign_id" text not null, "recipient_id" uuid not null, "kind" text not null, "link_id" text null, "suspect" boolean not null, "reasons" text not null, "occurred_at" timestamptz not null, primary key ("id"))`);
    this.addSql(`create index "tracking_hit_recipient_index" on "tracking_hit" ("company_id", "recipient_id", "occurred_at")`);
    this.addSql(`create index "tracking_hit_campaign_index" on "tracking_hit" ("company_id", "campaign_id", "kind")`);
    this.addSql(`create table "tracking_link" ("company_id" uuid not null, "campaign_id" text not null, "link_id" text not null, "url" text not null, "created_at" timestamptz not null default now(), primary key ("company_id", "campaign_id", "link_id"))`);
    this.addSql(`create table "tracking_recipient" ("recipient_id" uuid not null, "company_id" uuid not null, "campaign_id" text not null, "contact_id" uuid not null, "email" text not null, "language" text null, "created_at" timestamptz not null default now(), primary key ("recipient_id"))`);
    this.addSql(`create index "tracking_recipient_campaign_index" on "tracking_recipient" ("company_id", "campaign_id")`);
    this.addSql(`alter table "tracking_first" add constraint "tracking_first_company_id_fkey" foreign key ("company_id") references "company" ("id") on update no action on delete cascade`);
    this.addSql(`alter table "tracking_first" add constraint "tracking_first_kind" check (kind in ('open', 'click', 'unsubscribe'))`);
    this.addSql(`alter table "tracking_hit" add constraint "tracking_hit_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
    this.addSql(`alter table "tracking_hit" add constraint "tracking_hit_kind" check (kind in ('click', 'open'))`);
    this.addSql(`alter table "tracking_link" add constraint "tracking_link_company_id_fkey" foreign key ("company_id") references "company" ("id") on update no action on delete cascade`);
    this.addSql(`alter table "tracking_recipient" add constraint "tracking_recipient_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
  }

  override down(): void {
    this.addSql(`drop table if exists "tracking_first" cascade`);
    this.addSql(`drop table if exists "tracking_hit" cascade`);
    this.addSql(`drop table if exists "tracking_link" cascade`);
    this.addSql(`drop table if exists "tracking_recipient" cascade`);
  }
}
