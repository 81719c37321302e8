import { Migration } from "@mikro-orm/migrations";

/**
 * Campaigns: `campaign` (a draft's audience, content, sender, tracking and
 * state) and `campaign_recipient` (its audience, fixed when sending starts,
 * one row per contact, with each one's outcome and engagement). A campaign
 * copy is a message: `message` gains the campaign and contact it belongs
 * to, and the headers added to it (List-Unsubscribe).
 */
export class Migration20261127044010_campaigns extends Migration {
  override up(): void {
    this.addSql(`create table "campaign" ("id" uuid not null, "company_id" uuid not null, "name" text not null, "state" text not null, "list_ids" uuid[] not null, "tag" text null, "template_id" uuid null, "subject" text null, "html" text null, "text_body" text null, "sender_id" uuid null, "reply_to" text null, "track_opens" boolean not null default false, "track_clicks" boolean not null default false, "send_at" timestamptz null, "started_at" timestamptz null, "finished_at" timestamptz null, "workflow_started_at" timestamptz null, "created_at" timestamptz not null default now(), "updated_at" timestamptz not null default now(), primary key ("id"))`);
    this.addSql(`CREATE INDEX campaign_list_index ON public.campaign USING btree (company_id, created_at DESC, id DESC)`);
    this.addSql(`create table "campaign_recipient" ("id" uuid not null, "company_id" uuid not null, "campaign_id" uuid not null, "contact_id" uuid not null, "email" text not null, "outcome" text not null, "handed_over_at" timestamptz null, "opened_at" timestamptz null, "clicked_at" timestamptz null, "unsubscribed_at" timestamptz null, "created_at" timestamptz not null default now(), primary key ("id"))`);
    this.addSql(`create index "campaign_recipient_outcome_index" on "campaign_recipient" ("company_id", "campaign_id", "outcome", "id")`);
    this.addSql(`alter table "campaign_recipient" add constraint "campaign_recipient_contact_key" unique ("campaign_id", "contact_id")`);
    this.addSql(`alter table "message" add "campaign_id" uuid null, add "contact_id" uuid null, add "extra_headers" jsonb null`);
    this.addSql(`alter table "campaign" add constraint "campaign_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
    this.addSql(`alter table "campaign" add constraint "campaign_state_check" check (state IN ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled'))`);
    this.addSql(`alter table "campaign_recipient" add constraint "campaign_recipient_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
    this.addSql(`alter table "campaign_recipient" add constraint "campaign_recipient_campaign_id_fkey" foreign key ("campaign_id") references "campaign" ("id") on delete cascade`);
    this.addSql(`alter table "campaign_recipient" add constraint "campaign_recipient_outcome_check" check (outcome IN ('waiting', 'accepted', 'failed', 'unknown', 'suppressed', 'skipped'))`);
  }

  override down(): void {
    this.addSql(`alter table "campaign_recipient" drop constraint "campaign_recipient_campaign_id_fkey"`);
    this.addSql(`drop table if exists "campaign" cascade`);
    this.addSql(`drop table if exists "campaign_recipient" cascade`);
    this.addSql(`alter table "message" drop column "campaign_id", drop column "contact_id", drop column "extra_headers"`);
  }
}
