import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * VERP return paths: every message leaves with its own envelope sender,
 * `b-<token>@<return-path domain>`, so a bounce (or a feedback report sent
 * to the return path) names the message it is about.
 *
 * token = the message id (32 hex digits, the UUID without dashes) followed
 * by the first 16 hex digits (64 bits) of HMAC-SHA256(key, "mail.v1.verp:" +
 * message id + "@" + return-path domain). The MAC covers the domain, so the
 * token is good only on the domain the message left with: the same token on
 * another domain is refused like a forged one. The check needs no database:
 * a forged, mistyped or moved address is refused at RCPT TO, before anything
 * is read. Lower-case hex only, so a relay that changes the case of the
 * address cannot break it (it is compared case-insensitively).
 *
 * An address whose MAC covers the message id alone (the older form, which
 * mail still in flight carries) reads too, marked `domainSigned: false`:
 * whoever accepts one checks its domain against its message (DeliveryReports).
 */
const PREFIX = "b-";
const MAC_HEX = 16;
const TOKEN = /^b-([0-9a-f]{32})([0-9a-f]{16})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What a return path with a valid MAC says. */
export interface ReturnPathToken {
  readonly messageId: string;
  /** The address's domain, lower case. */
  readonly domain: string;
  /** True when the MAC covers the domain: the domain is then the one the message left with. */
  readonly domainSigned: boolean;
}

export class VerpAddresses {
  readonly #key: Buffer;

  constructor(key: string) {
    if (key.length < 16) throw new RangeError("the VERP key must be at least 16 characters");
    this.#key = Buffer.from(key, "utf8");
  }

  /** The envelope sender of one message. */
  addressFor(messageId: string, returnPathDomain: string): string {
    const id = messageId.toLowerCase();
    if (!UUID.test(id)) throw new TypeError("a VERP address needs a UUID message id");
    const hex = id.replaceAll("-", "");
    const domain = returnPathDomain.toLowerCase();
    return `${PREFIX}${hex}${this.#mac(`${hex}@${domain}`)}@${domain}`;
  }

  /** What an address says, or undefined when it is not one of ours (bad form, or a MAC that is not ours for this id and domain). */
  read(address: string): ReturnPathToken | undefined {
    const lower = address.toLowerCase();
    const at = lower.lastIndexOf("@");
    if (at <= 0 || at === lower.length - 1) return undefined;
    const match = TOKEN.exec(lower.slice(0, at));
    if (!match) return undefined;
    const [, hex = "", mac = ""] = match;
    const domain = lower.slice(at + 1);
    const given = Buffer.from(mac, "utf8");
    const messageId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    if (sameMac(this.#mac(`${hex}@${domain}`), given)) return { messageId, domain, domainSigned: true };
    if (sameMac(this.#mac(hex), given)) return { messageId, domain, domainSigned: false };
    return undefined;
  }

  #mac(text: string): string {
    return createHmac("sha256", this.#key).update(`mail.v1.verp:${text}`).digest("hex").slice(0, MAC_HEX);
  }
}

/** Constant-time: how much of a MAC matched says nothing. */
function sameMac(expected: string, given: Buffer): boolean {
  const wanted = Buffer.from(expected, "utf8");
  return wanted.length === given.length && timingSafeEqual(wanted, given);
}
