import { Migration } from "@mikro-orm/migrations";

/**
 * message.system: the service's own mail (sign-in links, invitations, double
 * opt-in confirmations, owner notices). Its content carries one-time links,
 * so it is stored sealed and never shown by any read. Not null with a
 * constant default: PostgreSQL adds it without rewriting the table.
 */
export class Migration20251203000000_system_mail extends Migration {
  override up(): void {
    this.addSql(`alter table message add column system boolean not null default false`);
  }

  override down(): void {
    this.addSql(`alter table message drop column system`);
  }
}
