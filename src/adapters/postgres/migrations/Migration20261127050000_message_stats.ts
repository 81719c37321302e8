import { Migration } from "@mikro-orm/migrations";

/**
 * message_stats_hour: a company's messages counted by outcome per UTC hour,
 * for all its mail, per tag key and per template, split in eight shards
 * (entities/message-stats-hour.ts). Kept by the statements that record
 * acceptances and moves from now on; the messages already in the log are
 * counted here once, each outcome at the time its event was recorded (a
 * provider's event that did not move the status, such as a delivery
 * reported after a complaint, counts here as well).
 */
export class Migration20261127050000_message_stats extends Migration {
  override up(): void {
    this.addSql(`create table "message_stats_hour" ("company_id" uuid not null, "dimension" smallint not null, "dimension_value" text not null, "hour" timestamptz not null, "shard" smallint not null, "accepted" int not null default 0, "sent" int not null default 0, "delivered" int not null default 0, "bounced" int not null default 0, "complained" int not null default 0, "rejected" int not null default 0, "failed" int not null default 0, "suppressed" int not null default 0, "deferred" int not null default 0, primary key ("company_id", "dimension", "dimension_value", "hour", "shard"))`);
    this.addSql(`alter table "message_stats_hour" add constraint "message_stats_hour_company_id_fkey" foreign key ("company_id") references "company" ("id") on delete cascade`);
    // The log so far: acceptances at created_at, moves at their event's time (the event types are the statuses' names).
    this.addSql(`
      insert into message_stats_hour (company_id, dimension, dimension_value, hour, shard, accepted, sent, delivered, bounced, complained, rejected, failed, suppressed, deferred)
      select o.company_id, d.dimension, d.value, date_bin('1 hour', o.at, timestamptz '2000-01-01 00:00:00+00'), (hashtext(o.id::text) & 7)::smallint,
             count(*) filter (where o.outcome = 'accepted'), count(*) filter (where o.outcome = 'sent'),
             count(*) filter (where o.outcome = 'delivered'), count(*) filter (where o.outcome = 'bounced'),
             count(*) filter (where o.outcome = 'complained'), count(*) filter (where o.outcome = 'rejected'),
             count(*) filter (where o.outcome = 'failed'), count(*) filter (where o.outcome = 'suppressed'),
             count(*) filter (where o.outcome = 'deferred')
        from (
          select m.id, m.company_id, m.tags, m.template_id, 'accepted' as outcome, m.created_at as at from message m
          union all
          select m.id, m.company_id, m.tags, m.template_id,
                 case e.type when 'delivery' then 'delivered' when 'bounce' then 'bounced' when 'complaint' then 'complained'
                             when 'reject' then 'rejected' else e.type end, e.at
            from message_event e join message m on m.company_id = e.company_id and m.id = e.message_id
           where e.type in ('sent', 'delivery', 'bounce', 'complaint', 'reject', 'failed', 'suppressed', 'deferred')
        ) o
        cross join lateral (
          select 0::smallint, ''::text
          union all select 1::smallint, k from jsonb_object_keys(o.tags) k
          union all select 2::smallint, o.template_id::text where o.template_id is not null
        ) d(dimension, value)
       group by 1, 2, 3, 4, 5`);
  }

  override down(): void {
    this.addSql(`drop table if exists "message_stats_hour" cascade`);
  }
}
