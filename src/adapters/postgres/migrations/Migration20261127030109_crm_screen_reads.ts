import { Migration } from "@mikro-orm/migrations";

/**
 * Three indexes for the screen's contact pages, each a read that would
 * otherwise walk a whole company's rows:
 * - message_recipient_index: the message log's `recipient` filter (one
 *   address's messages, newest first, compared lower-cased);
 * - conversion_email_index: the conversions of one contact (by its
 *   address), newest recorded first;
 * - contact_form_consent_index: sign-ups per form (contacts whose consent
 *   source is `form:<publicId>`), by consent time.
 * Built inside the migrations' one transaction (not CONCURRENTLY), so the
 * message table takes no writes while its index is built: on a large log,
 * apply it in a quiet window.
 */
export class Migration20261127030109_crm_screen_reads extends Migration {
  override up(): void {
    this.addSql(`create index "contact_form_consent_index" on "contact" ("company_id", "consent_source", "consent_at") where consent_source ~~ 'form:%'::text`);
    this.addSql(`CREATE INDEX conversion_email_index ON public.conversion USING btree (company_id, email, created_at DESC, id DESC) WHERE (email IS NOT NULL)`);
    this.addSql(`CREATE INDEX message_recipient_index ON public.message USING btree (company_id, lower(recipient), created_at DESC, id DESC)`);
  }

  override down(): void {
    this.addSql(`drop index "contact_form_consent_index"`);
    this.addSql(`drop index "conversion_email_index"`);
    this.addSql(`drop index "message_recipient_index"`);
  }
}
