import { createHmac, timingSafeEqual } from "node:crypto";
import { ValidationError } from "../../contract/api-error.ts";
import type { DeliveryPosition } from "./ports.ts";

/**
 * Opaque cursors of the deliveries list: base64url of the position, the
 * company and a fingerprint of the filters, followed by an HMAC-SHA256 of
 * them. Nothing in it is secret (the caller saw those rows); the MAC keeps
 * a caller from moving it, pointing it at another company or reusing it
 * with other filters.
 */
export interface DeliveryCursorCodec {
  encode(companyId: string, fingerprint: string, position: DeliveryPosition): string;
  /** The position, or a ValidationError naming `cursor`. */
  decode(token: string, companyId: string, fingerprint: string): DeliveryPosition;
}

const MAC_BYTES = 32;
const MAX_TOKEN_LENGTH = 512;
/** Domain separation from every other cursor signed with the same secret. */
const MAC_CONTEXT = "mail.v1.webhook-deliveries.cursor.v1\0";
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MICROS_SHAPE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

function invalid(problem = "is not a valid cursor; pass nextCursor back unchanged"): ValidationError {
  return new ValidationError([{ field: "cursor", problem }]);
}

export function createDeliveryCursorCodec(secret: string): DeliveryCursorCodec {
  if (secret === "") throw new Error("the cursor secret must not be empty");
  const mac = (payload: Buffer): Buffer => createHmac("sha256", secret).update(MAC_CONTEXT).update(payload).digest();

  return {
    encode(companyId, fingerprint, position) {
      const bytes = Buffer.from(JSON.stringify({ c: companyId, f: fingerprint, t: position.createdAt, i: position.id }), "utf8");
      return Buffer.concat([bytes, mac(bytes)]).toString("base64url");
    },
    decode(token, companyId, fingerprint) {
      if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) throw invalid();
      const raw = Buffer.from(token, "base64url");
      if (raw.toString("base64url") !== token || raw.length <= MAC_BYTES) throw invalid();
      const bytes = raw.subarray(0, raw.length - MAC_BYTES);
      if (!timingSafeEqual(raw.subarray(raw.length - MAC_BYTES), mac(bytes))) throw invalid();
      let payload: { c?: unknown; f?: unknown; t?: unknown; i?: unknown };
      try {
        payload = JSON.parse(bytes.toString("utf8")) as typeof payload;
      } catch {
        throw invalid();
      }
      if (typeof payload.t !== "string" || !MICROS_SHAPE.test(payload.t) || typeof payload.i !== "string" || !UUID_SHAPE.test(payload.i)) {
        throw invalid();
      }
      if (payload.c !== companyId) throw invalid();
      if (payload.f !== fingerprint) throw invalid("was issued for other filters; send the same filters as on the first page");
      return { createdAt: payload.t, id: payload.i };
    },
  };
}
