import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * VERP return paths: every message leaves with its own envelope sender,
 * `b-<token>@<return-path domain>`, so a bounce (or a feedback report sent
 * to the return path) names the message it is about.
 *
 * token = the message id (32 hex digits, the UUID without dashes) followed
 * by the first 16 hex digits (64 bits) of HMAC-SHA256(key, "mail.v1.verp:" +
 * message id). The check needs no database: a forged or mistyped address is
 * refused at RCPT TO, before anything is read. Lower-case hex only, so a
 * relay that changes the case of the local part cannot break it (it is
 * compared case-insensitively).
 */
const PREFIX = "b-";
const MAC_HEX = 16;
const TOKEN = /^b-([0-9a-f]{32})([0-9a-f]{16})$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

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
    return `${PREFIX}${hex}${this.#mac(hex)}@${returnPathDomain.toLowerCase()}`;
  }

  /** The message id an address names, or undefined when it is not one of ours (bad form or bad MAC). */
  messageIdOf(address: string): string | undefined {
    const at = address.lastIndexOf("@");
    if (at <= 0) return undefined;
    const match = TOKEN.exec(address.slice(0, at).toLowerCase());
    if (!match) return undefined;
    const [, hex = "", mac = ""] = match;
    const expected = Buffer.from(this.#mac(hex), "utf8");
    const given = Buffer.from(mac, "utf8");
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  #mac(hex: string): string {
    return createHmac("sha256", this.#key).update(`mail.v1.verp:${hex}`).digest("hex").slice(0, MAC_HEX);
  }
}
