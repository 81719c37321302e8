import { Migration } from "@mikro-orm/migrations";

/**
 * The deliverability guard (docs/deliverability.md): `sending_guard` holds a
 * company's suspension (when, why, the figures that crossed the line) and
 * its last lift, from which its sends count again; the handoff probes it by
 * primary key. `message_sent_index` lets the guard count a company's sends
 * of the last 24 hours and how they ended from the index alone. The audit
 * log's actor may be the service itself (`system`: the guard suspending).
 */
export class Migration20261127043224_sending_guard extends Migration {
  override up(): void {
    this.addSql(`create table "sending_guard" ("company_id" uuid not null, "suspended_at" timestamptz null, "reason" text null, "sends" int not null default 0, "bounces" int not null default 0, "complaints" int not null default 0, "window_from" timestamptz null, "lifted_at" timestamptz null, primary key ("company_id"))`);
    this.addSql(`alter table "audit_event" drop constraint "audit_event_actor_kind_check"`);
    this.addSql(`alter table "audit_event" add constraint "audit_event_actor_kind_check" check (actor_kind in ('member', 'api_key', 'operator', 'system'))`);
    this.addSql(`CREATE INDEX message_sent_index ON public.message USING btree (company_id, sent_at) INCLUDE (status) WHERE (sent_at IS NOT NULL)`);
    this.addSql(`alter table "sending_guard" add constraint "sending_guard_company_id_fkey" foreign key ("company_id") references "company" ("id") on update no action on delete cascade`);
    this.addSql(`alter table "sending_guard" add constraint "sending_guard_reason_check" check (reason in ('bounce_rate', 'complaint_rate'))`);
  }

  override down(): void {
    this.addSql(`drop table if exists "sending_guard" cascade`);
    this.addSql(`alter table "audit_event" drop constraint "audit_event_actor_kind_check"`);
    this.addSql(`delete from "audit_event" where actor_kind = 'system'`);
    this.addSql(`alter table "audit_event" add constraint "audit_event_actor_kind_check" check ("actor_kind" in ('member', 'api_key', 'operator'))`);
    this.addSql(`drop index "message_sent_index"`);
  }
}
