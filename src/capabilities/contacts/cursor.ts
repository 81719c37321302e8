import { createHmac, timingSafeEqual } from "node:crypto";
import { ValidationError } from "../../contract/api-error.ts";

/**
 * Cursors of GET /mail/v1/contacts: the message log's design
 * (src/capabilities/messages/read/cursor.ts) with a MAC context of their
 * own, so that a message-log cursor never verifies here and the other way
 * round, even under the same secret.
 *
 * A position is the (created_at, id) of a page's last row; `createdAt` is
 * UTC text with all six fractional digits, because a JS Date keeps
 * milliseconds only and a rounded position would skip or repeat rows.
 */
export interface ContactPosition {
  readonly createdAt: string;
  readonly id: string;
}

export interface ContactCursorCodec {
  encode(companyId: string, fingerprint: string, position: ContactPosition): string;
  /** The position of a cursor this codec made for this company and these filters; else a ValidationError naming `cursor`. */
  decode(token: string, companyId: string, fingerprint: string): ContactPosition;
}

const MAC_BYTES = 32;
/** Real cursors are ~200 characters; anything far longer is not one of ours. */
const MAX_TOKEN_LENGTH = 512;
const MAC_CONTEXT = "mail.v1.contacts.cursor.v1\0";

const TOKEN_SHAPE = /^[A-Za-z0-9_-]+$/;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MICROS_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

interface Payload {
  /** Company the cursor was issued to. */
  c: string;
  /** Fingerprint of the filters it was issued for. */
  f: string;
  /** created_at of the last row, microseconds, UTC. */
  t: string;
  /** id of the last row. */
  i: string;
}

function invalid(problem = "is not a valid cursor; pass nextCursor back unchanged"): ValidationError {
  return new ValidationError([{ field: "cursor", problem }]);
}

function isPayload(value: unknown): value is Payload {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    typeof p.c === "string" &&
    typeof p.f === "string" &&
    typeof p.t === "string" &&
    MICROS_SHAPE.test(p.t) &&
    typeof p.i === "string" &&
    UUID_SHAPE.test(p.i)
  );
}

/**
 * base64url of the JSON payload followed by its HMAC-SHA256 under `secret`.
 * Nothing in a cursor is secret (the caller saw those rows); the MAC stops
 * the caller from moving it, pointing it at another company or reusing it
 * with other filters.
 */
export function createContactCursorCodec(secret: string): ContactCursorCodec {
  if (secret === "") throw new Error("the contacts cursor secret must not be empty");

  const mac = (payload: Buffer): Buffer => createHmac("sha256", secret).update(MAC_CONTEXT).update(payload).digest();

  return {
    encode(companyId, fingerprint, position) {
      const payload: Payload = { c: companyId, f: fingerprint, t: position.createdAt, i: position.id };
      const bytes = Buffer.from(JSON.stringify(payload), "utf8");
      return Buffer.concat([bytes, mac(bytes)]).toString("base64url");
    },

    decode(token, companyId, fingerprint) {
      if (token.length > MAX_TOKEN_LENGTH || !TOKEN_SHAPE.test(token)) throw invalid();
      const raw = Buffer.from(token, "base64url");
      // Insist on the canonical spelling: Node's decoder ignores the unused
      // bits of the last character, and no edited cursor may be accepted.
      if (raw.toString("base64url") !== token || raw.length <= MAC_BYTES) throw invalid();
      const bytes = raw.subarray(0, raw.length - MAC_BYTES);
      if (!timingSafeEqual(raw.subarray(raw.length - MAC_BYTES), mac(bytes))) throw invalid();

      let payload: unknown;
      try {
        payload = JSON.parse(bytes.toString("utf8"));
      } catch {
        throw invalid();
      }
      if (!isPayload(payload)) throw invalid();
      // Same answer as a forged cursor: whether it was issued to another company is not the caller's business.
      if (payload.c !== companyId) throw invalid();
      if (payload.f !== fingerprint) {
        throw invalid("was issued for other filters; send the same status, q, tag and listId as on the first page");
      }
      return { createdAt: payload.t, id: payload.i };
    },
  };
}
