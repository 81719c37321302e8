import { Migration } from "@mikro-orm/migrations";

/**
 * The fingerprint of the send that created a message with an idempotency
 * key. The key names the message for the whole company (spec, Idempotency
 * rule 4), so a later send with the key, from any API key and at any time,
 * is the original message only when it asks for the same thing; another
 * request with the key answers 409 IDEMPOTENCY_CONFLICT. Null for messages
 * sent without a key (and for any recorded before this column existed:
 * those keep answering as the original message).
 */
export class Migration20251124000000_message_request_fingerprint extends Migration {
  override up(): void {
    this.addSql(`alter table message add column request_fingerprint bytea null`);
  }

  override down(): void {
    this.addSql(`alter table message drop column if exists request_fingerprint`);
  }
}
