import { Migration } from "@mikro-orm/migrations";

/**
 * delivery_report.kind loses `rejected_by_provider`: no report was ever
 * kept under it. It was meant for a rejection after acceptance, and the
 * one such report there is (SES `Reject`) moves the message to `rejected`
 * with its credit returned, as the spec says of a permanent rejection by the
 * email service, instead of being kept as a note. A row that uses it
 * anyway (written by hand) is kept as `unmatched`, its reason saying what it
 * was, before the check narrows.
 */
export class Migration20261127024049_delivery_report_kinds extends Migration {
  override up(): void {
    this.addSql(`update "delivery_report" set kind = 'unmatched', reason = 'rejected_by_provider: ' || reason where kind = 'rejected_by_provider'`);
    this.addSql(`alter table "delivery_report" drop constraint "delivery_report_kind_check"`);
    this.addSql(`alter table "delivery_report" add constraint "delivery_report_kind_check" check (kind IN ('unmatched', 'delayed', 'soft_bounce'))`);
  }

  override down(): void {
    this.addSql(`alter table "delivery_report" drop constraint "delivery_report_kind_check"`);
    this.addSql(`alter table "delivery_report" add constraint "delivery_report_kind_check" check ("kind" in ('unmatched', 'delayed', 'soft_bounce', 'rejected_by_provider'))`);
  }
}
