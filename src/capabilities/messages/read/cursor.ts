import { createKeysetCursorCodec, type KeysetCursorCodec, type KeysetPosition } from "../../shared/keyset-cursor.ts";

/** Where a message-log page ended: the (created_at, id) of its last row. */
export type LogPosition = KeysetPosition;
export type CursorCodec = KeysetCursorCodec;

/** Cursors of GET /mail/v1/messages (design: src/capabilities/shared/keyset-cursor.ts). */
export function createCursorCodec(secret: string): CursorCodec {
  return createKeysetCursorCodec(secret, { context: "mail.v1.message-log.cursor.v1", label: "message log", filters: "status, q, since, tag and recipient" });
}
