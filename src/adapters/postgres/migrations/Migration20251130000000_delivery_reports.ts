import { Migration } from "@mikro-orm/migrations";

/**
 * Delivery reports that changed no status (docs/delivery-loop.md): the
 * unmatched ones (auto-replies, unparseable mail, reports naming no message
 * of ours) and the noted ones (delays, soft bounces), kept 7 days for
 * operators. company_id / message_id are set when the report names one of
 * our messages; no foreign keys: a report is a record of what came in, and
 * every row is dropped at expires_at anyway.
 */
export class Migration20251130000000_delivery_reports extends Migration {
  override up(): void {
    this.addSql(`
      create table delivery_report (
        id uuid primary key,
        source text not null check (source in ('smtp', 'ses')),
        kind text not null check (kind in ('unmatched', 'delayed', 'soft_bounce', 'rejected_by_provider')),
        reason text not null,
        company_id uuid null,
        message_id uuid null,
        from_text text null,
        subject text null,
        excerpt text not null default '',
        received_at timestamptz not null,
        expires_at timestamptz not null
      )`);
    this.addSql(`create index delivery_report_expiry_index on delivery_report (expires_at)`);
    this.addSql(`create index delivery_report_company_index on delivery_report (company_id, received_at)`);
  }

  override down(): void {
    this.addSql(`drop table if exists delivery_report`);
  }
}
