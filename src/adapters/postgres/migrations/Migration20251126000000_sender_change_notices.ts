import { Migration } from "@mikro-orm/migrations";

/**
 * API processes reuse a send's sender check for a few seconds
 * (src/capabilities/messages/accept/cached-senders.ts). Like the API key
 * notices (Migration20251125200000_credential_change_notices), every
 * committed change it depends on NOTIFYs channel mail_senders_changed,
 * whoever makes it: a sender added, changed or deleted (a company's
 * deletion deletes its senders); a sending domain changed (its
 * verification) or deleted. A new domain has no sender yet: inserts into
 * sending_domain notify nothing. No payload: listeners forget everything.
 */
export class Migration20251126000000_sender_change_notices extends Migration {
  override up(): void {
    this.addSql(`
      create function sender_sender_senders_changed_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_senders_changed', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger sender_senders_changed
        after insert or update or delete on sender
        for each statement execute function sender_sender_senders_changed_fn()`);
    this.addSql(`
      create function sending_domain_sending_domain_senders_changed_fn() returns trigger language plpgsql as $$
      begin perform pg_notify('mail_senders_changed', ''); return null; end;
      $$`);
    this.addSql(`
      create trigger sending_domain_senders_changed
        after update or delete on sending_domain
        for each statement execute function sending_domain_sending_domain_senders_changed_fn()`);
  }

  override down(): void {
    this.addSql(`drop trigger if exists sending_domain_senders_changed on sending_domain`);
    this.addSql(`drop function if exists sending_domain_sending_domain_senders_changed_fn()`);
    this.addSql(`drop trigger if exists sender_senders_changed on sender`);
    this.addSql(`drop function if exists sender_sender_senders_changed_fn()`);
  }
}
