import { createHmac, timingSafeEqual } from "node:crypto";
import { ValidationError } from "../../contract/api-error.ts";

/**
 * Where a page ended: the (created_at, id) of its last row. `createdAt` is
 * text with all six fractional digits (`2025-01-01T12:00:00.123456Z`): a JS
 * Date keeps milliseconds only, and a position rounded to the millisecond
 * would skip or repeat rows created within the same millisecond. `id` is
 * the row's tie-breaker in the form its list declares (KeysetCursorKind.id).
 */
export interface KeysetPosition {
  readonly createdAt: string;
  readonly id: string;
}

export interface KeysetCursorCodec {
  encode(companyId: string, fingerprint: string, position: KeysetPosition): string;
  /** The position of a cursor this codec made for this company and these filters; else a ValidationError naming `cursor`. */
  decode(token: string, companyId: string, fingerprint: string): KeysetPosition;
}

const MAC_BYTES = 32;

const TOKEN_SHAPE = /^[A-Za-z0-9_-]+$/;
const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The tie-breakers a position may hold: a row's UUID, a serial number (a bigint key), or a text key such as an address. */
export type KeysetIdKind = "uuid" | "serial" | "text";

const ID_SHAPES: Record<KeysetIdKind, RegExp> = {
  uuid: UUID_SHAPE,
  serial: /^[1-9]\d{0,18}$/,
  // An address is at most 254 characters; 320 leaves room and bounds the cursor.
  text: /^[^\0]{1,320}$/u,
};

/**
 * Real cursors are ~200 characters (~1,300 with a long text key in every
 * byte of UTF-8); anything far longer is not one of ours and is not worth decoding.
 */
const MAX_TOKEN_LENGTH: Record<KeysetIdKind, number> = { uuid: 512, serial: 512, text: 2048 };
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

function isPayload(value: unknown, idShape: RegExp): value is Payload {
  if (typeof value !== "object" || value === null) return false;
  const p = value as Record<string, unknown>;
  return (
    typeof p.c === "string" &&
    typeof p.f === "string" &&
    typeof p.t === "string" &&
    MICROS_SHAPE.test(p.t) &&
    typeof p.i === "string" &&
    idShape.test(p.i)
  );
}

/**
 * Opaque, tamper-proof cursors: base64url of the JSON payload followed by an
 * HMAC-SHA256 of it under `secret`. Nothing in a cursor is secret (the
 * caller saw those rows); the MAC makes sure the caller cannot move it, point
 * it at another company, or reuse it with other filters.
 */
export interface KeysetCursorKind {
  /**
   * Domain separation, e.g. `mail.v1.message-log.cursor.v1`: a MAC made for
   * another kind of cursor with the same secret never verifies here.
   */
  readonly context: string;
  /** What the list is called in errors, e.g. `message log`. */
  readonly label: string;
  /** The filters a cursor is bound to, as the caller names them, e.g. `status, q, since and tag`. */
  readonly filters: string;
  /** What the rows' tie-breaking id is (default `uuid`). */
  readonly id?: KeysetIdKind;
}

export function createKeysetCursorCodec(secret: string, kind: KeysetCursorKind): KeysetCursorCodec {
  if (secret === "") throw new Error(`the ${kind.label} cursor secret must not be empty`);
  const context = `${kind.context}\0`;
  const idKind = kind.id ?? "uuid";
  const idShape = ID_SHAPES[idKind];
  const maxTokenLength = MAX_TOKEN_LENGTH[idKind];

  const mac = (payload: Buffer): Buffer => createHmac("sha256", secret).update(context).update(payload).digest();

  return {
    encode(companyId, fingerprint, position) {
      const payload: Payload = { c: companyId, f: fingerprint, t: position.createdAt, i: position.id };
      const bytes = Buffer.from(JSON.stringify(payload), "utf8");
      return Buffer.concat([bytes, mac(bytes)]).toString("base64url");
    },

    decode(token, companyId, fingerprint) {
      if (token.length > maxTokenLength || !TOKEN_SHAPE.test(token)) throw invalid();
      const raw = Buffer.from(token, "base64url");
      // Node's decoder ignores the unused bits of the last character; insist
      // on the canonical spelling so that no edited cursor is ever accepted.
      if (raw.toString("base64url") !== token || raw.length <= MAC_BYTES) throw invalid();
      const bytes = raw.subarray(0, raw.length - MAC_BYTES);
      if (!timingSafeEqual(raw.subarray(raw.length - MAC_BYTES), mac(bytes))) throw invalid();

      let payload: unknown;
      try {
        payload = JSON.parse(bytes.toString("utf8"));
      } catch {
        throw invalid();
      }
      if (!isPayload(payload, idShape)) throw invalid();
      // Same answer as a forged cursor: whether a cursor was issued to another
      // company is none of the caller's business.
      if (payload.c !== companyId) throw invalid();
      if (payload.f !== fingerprint) {
        throw invalid(`was issued for other filters; send the same ${kind.filters} as on the first page`);
      }
      return { createdAt: payload.t, id: payload.i };
    },
  };
}
