import { Migration } from "@mikro-orm/migrations";

/**
 * suppression_company_created_index: a company reads its suppression list
 * newest first, a page at a time (keyset on created_at, then email); the
 * primary key (company_id, email) cannot order it.
 */
export class Migration20261127031500_suppression_list_index extends Migration {
  override up(): void {
    this.addSql(`create index "suppression_company_created_index" on "suppression" ("company_id", "created_at" desc, "email" desc)`);
  }

  override down(): void {
    this.addSql(`drop index "suppression_company_created_index"`);
  }
}
