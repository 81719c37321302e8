import { Migration } from "@mikro-orm/migrations";

/**
 * message_stats_pending: the outcomes the send path records for the
 * statistics, folded into message_stats_hour in batches
 * (entities/message-stats-pending.ts). The send path's statements write
 * here from now on instead of upserting the aggregates themselves.
 */
export class Migration20261127103103_message_stats_pending extends Migration {
  override up(): void {
    this.addSql(`create table "message_stats_pending" ("id" bigserial primary key, "company_id" uuid not null, "message_id" uuid not null, "outcome" text not null, "at" timestamptz not null)`);
  }

  override down(): void {
    this.addSql(`drop table if exists "message_stats_pending" cascade`);
  }
}
