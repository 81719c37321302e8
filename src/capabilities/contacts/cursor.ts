import { createKeysetCursorCodec, type KeysetCursorCodec, type KeysetPosition } from "../shared/keyset-cursor.ts";

/**
 * Cursors of GET /mail/v1/contacts: the message log's design
 * (src/capabilities/shared/keyset-cursor.ts) with a MAC context of their
 * own, so that a message-log cursor never verifies here and the other way
 * round, even under the same secret.
 */
export type ContactPosition = KeysetPosition;
export type ContactCursorCodec = KeysetCursorCodec;

export function createContactCursorCodec(secret: string): ContactCursorCodec {
  return createKeysetCursorCodec(secret, { context: "mail.v1.contacts.cursor.v1", label: "contacts", filters: "status, q, tag and listId" });
}
