import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * The tokens of a campaign copy's tracked addresses: the click links
 * (`/t/c/<token>`), the open pixel (`/t/o/<token>`), the unsubscribe link
 * (`/u/<token>`) and the List-Unsubscribe mailto
 * (`unsubscribe+<token>@<return-path MX host>`).
 *
 * A web token is 46 bytes in base64url (62 characters):
 *
 *     version (1) | kind (1) | issued at, unix seconds (4) | recipient id (16) | link id (8) | MAC (16)
 *
 * The MAC (HMAC-SHA256, first 16 bytes) covers the first 30 bytes AND the
 * company, campaign and contact of the recipient as the copy was
 * registered (tracking_recipient): the token shows only the recipient and
 * the link, but it is good only for that company's campaign, recipient,
 * contact and link. Checking it reads the recipient row (one indexed read);
 * a forged, truncated or altered token is refused like an unknown one.
 *
 * The mailto token is lower-case hex, so a relay that changes the case of
 * an address cannot break it, and short enough for the 64 characters of a
 * local part: the recipient id (32) and a MAC of 8 bytes (16) over the
 * same binding, under its own label.
 *
 * The key is derived from CONFIRMATION_SECRET (the key of the links the
 * service emails) under its own label, so no tracking token can pass as a
 * confirmation link or back.
 */
export type TokenKind = "click" | "open" | "unsubscribe";

const KIND_BYTE: Readonly<Record<TokenKind, number>> = { click: 1, open: 2, unsubscribe: 3 };
const KIND_OF = new Map<number, TokenKind>([
  [1, "click"],
  [2, "open"],
  [3, "unsubscribe"],
]);

const VERSION = 1;
const BODY_BYTES = 30;
const MAC_BYTES = 16;
const WIRE_BYTES = BODY_BYTES + MAC_BYTES;
const WEB_TOKEN = /^[A-Za-z0-9_-]{62}$/;
const MAILTO_TOKEN = /^([0-9a-f]{32})([0-9a-f]{16})$/;
const LINK_ID = /^[0-9a-f]{16}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The local part's prefix of the List-Unsubscribe mailto address. */
export const MAILTO_PREFIX = "unsubscribe+";

/** The link id of the hidden honeypot link: never the id of a real URL (those are hashes). */
export const HONEYPOT_LINK_ID = "0000000000000000";
const NO_LINK = "0000000000000000";

/** What a token is bound to: the campaign copy as it was registered. */
export interface TokenBinding {
  readonly companyId: string;
  readonly campaignId: string;
  readonly recipientId: string;
  readonly contactId: string;
}

/** What a well-formed web token says before its MAC is checked. */
export interface TokenClaim {
  readonly kind: TokenKind;
  readonly recipientId: string;
  /** 16 lower-case hex digits; undefined for opens and unsubscribes. */
  readonly linkId: string | undefined;
  readonly issuedAt: Date;
}

export type TokenCheck = "valid" | "expired" | "invalid";

/** How long a tracked address works: a year of an old message in an inbox; an unsubscribe link must work at least that long. */
export const TRACKING_TOKEN_MAX_AGE_MS = 366 * 24 * 60 * 60 * 1000;
/** Clocks of processes differ a little: a token "from the future" by this much still passes. */
const CLOCK_SKEW_MS = 60 * 1000;

/** The id of a tracked link: the first 8 bytes of SHA-256 of its URL, in hex (the same URL has the same id in every copy). */
export function linkIdOf(url: string): string {
  const id = createHash("sha256").update(url).digest("hex").slice(0, 16);
  // The honeypot's id is reserved (a hash of all zeros would be a 1 in 2^64 event).
  return id === HONEYPOT_LINK_ID ? "0000000000000001" : id;
}

/** The tracking key, derived from CONFIRMATION_SECRET under its own label. */
export function trackingKey(secret: string): Buffer {
  if (secret === "") throw new Error("the tracking secret must not be empty");
  return createHmac("sha256", secret).update("mail.v1.campaign-tracking").digest();
}

function uuidBytes(id: string): Buffer {
  const lower = id.toLowerCase();
  if (!UUID.test(lower)) throw new TypeError("a tracking token needs a UUID recipient id");
  return Buffer.from(lower.replaceAll("-", ""), "hex");
}

function uuidOf(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function bindingText(b: TokenBinding): string {
  return ["", b.companyId.toLowerCase(), b.campaignId, b.recipientId.toLowerCase(), b.contactId.toLowerCase()].join("\0");
}

export class TrackingTokens {
  readonly #key: Buffer;
  readonly #maxAgeMs: number;

  constructor(secret: string, maxAgeMs = TRACKING_TOKEN_MAX_AGE_MS) {
    this.#key = trackingKey(secret);
    this.#maxAgeMs = maxAgeMs;
  }

  /** A web token of `kind` for the copy; `linkId` only for clicks. */
  issue(kind: TokenKind, binding: TokenBinding, at: Date, linkId?: string): string {
    const body = Buffer.alloc(BODY_BYTES);
    body[0] = VERSION;
    body[1] = KIND_BYTE[kind];
    body.writeUInt32BE(Math.max(0, Math.floor(at.getTime() / 1000)) >>> 0, 2);
    uuidBytes(binding.recipientId).copy(body, 6);
    const link = kind === "click" ? (linkId ?? "") : NO_LINK;
    if (!LINK_ID.test(link)) throw new TypeError("a click token needs a link id of 16 hex digits");
    Buffer.from(link, "hex").copy(body, 22);
    return Buffer.concat([body, this.#mac(body, binding)]).toString("base64url");
  }

  /** The claims of a well-formed token (its MAC not checked yet); undefined for anything else. */
  read(token: string): TokenClaim | undefined {
    if (!WEB_TOKEN.test(token)) return undefined;
    const bytes = Buffer.from(token, "base64url");
    if (bytes.length !== WIRE_BYTES || bytes[0] !== VERSION) return undefined;
    // Spelled another way (base64url's spare low bits), it is not the token
    // issued; compared like every other token, in constant time.
    const canonical = Buffer.from(bytes.toString("base64url"));
    const presented = Buffer.from(token);
    if (canonical.length !== presented.length || !timingSafeEqual(canonical, presented)) return undefined;
    const kind = KIND_OF.get(bytes[1] ?? 0);
    if (!kind) return undefined;
    const link = bytes.subarray(22, 30).toString("hex");
    return {
      kind,
      recipientId: uuidOf(bytes.subarray(6, 22).toString("hex")),
      linkId: kind === "click" ? link : undefined,
      issuedAt: new Date(bytes.readUInt32BE(2) * 1000),
    };
  }

  /** Checks the MAC against the registered copy (constant time), then the age. A bad MAC is `invalid` whatever the age. */
  verify(token: string, binding: TokenBinding, now: Date): TokenCheck {
    const claim = this.read(token);
    if (!claim || claim.recipientId !== binding.recipientId.toLowerCase()) return "invalid";
    const bytes = Buffer.from(token, "base64url");
    const expected = this.#mac(bytes.subarray(0, BODY_BYTES), binding);
    if (!timingSafeEqual(expected, bytes.subarray(BODY_BYTES))) return "invalid";
    const age = now.getTime() - claim.issuedAt.getTime();
    if (age < -CLOCK_SKEW_MS) return "invalid";
    return age > this.#maxAgeMs ? "expired" : "valid";
  }

  /** The List-Unsubscribe mailto local part of the copy: `unsubscribe+<hex token>`. */
  mailtoLocalPart(binding: TokenBinding): string {
    const hex = uuidBytes(binding.recipientId).toString("hex");
    return `${MAILTO_PREFIX}${hex}${this.#mailtoMac(binding)}`;
  }

  /** The recipient id an address's local part names when it has the mailto form (its MAC not checked yet). */
  readMailto(address: string): string | undefined {
    const lower = address.toLowerCase();
    const at = lower.lastIndexOf("@");
    const local = at < 0 ? lower : lower.slice(0, at);
    if (!local.startsWith(MAILTO_PREFIX)) return undefined;
    const match = MAILTO_TOKEN.exec(local.slice(MAILTO_PREFIX.length));
    return match?.[1] ? uuidOf(match[1]) : undefined;
  }

  /** True when the address's mailto MAC is the copy's (constant time). */
  verifyMailto(address: string, binding: TokenBinding): boolean {
    const lower = address.toLowerCase();
    const at = lower.lastIndexOf("@");
    const local = at < 0 ? lower : lower.slice(0, at);
    return local.length === this.mailtoLocalPart(binding).length && timingSafeEqual(Buffer.from(local), Buffer.from(this.mailtoLocalPart(binding)));
  }

  #mac(body: Buffer, binding: TokenBinding): Buffer {
    return createHmac("sha256", this.#key).update("web\0").update(body).update(bindingText(binding)).digest().subarray(0, MAC_BYTES);
  }

  #mailtoMac(binding: TokenBinding): string {
    return createHmac("sha256", this.#key).update(`mailto${bindingText(binding)}`).digest("hex").slice(0, 16);
  }
}
