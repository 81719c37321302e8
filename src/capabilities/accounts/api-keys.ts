import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * API key format: `<prefix>_<secret>`, e.g. `tml_3kTMd...` where `<prefix>`
 * is the three-letter service prefix (config.apiKeyPrefix) and `<secret>` is
 * 32 random bytes written in base62 (exactly 43 characters of [0-9A-Za-z]):
 * 256 bits of entropy, no characters that break a double-click selection or
 * need URL escaping.
 *
 * Only HMAC-SHA256(pepper, fullKey) is stored. With the pepper kept outside
 * the database, a leaked table alone is not enough to test guesses offline.
 */
const SECRET_BYTES = 32;
/** ceil(256 / log2(62)): every 32-byte value fits, shorter ones are zero-padded. */
export const SECRET_LENGTH = 43;
/** Characters of the secret shown in the key table after `<prefix>_`. */
const DISPLAY_CHARS = 8;
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const BASE = BigInt(ALPHABET.length);

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString("hex")}`);
  let out = "";
  while (n > 0n) {
    out = ALPHABET.charAt(Number(n % BASE)) + out;
    n /= BASE;
  }
  return out.padStart(SECRET_LENGTH, "0");
}

export interface GeneratedApiKey {
  /** The whole key, shown to its creator once and never stored. */
  readonly fullKey: string;
  /** Displayable start of the key, e.g. `tml_a1b2c3d4`. */
  readonly displayPrefix: string;
}

export function generateApiKey(servicePrefix: string): GeneratedApiKey {
  const secret = base62(randomBytes(SECRET_BYTES));
  return {
    fullKey: `${servicePrefix}_${secret}`,
    displayPrefix: `${servicePrefix}_${secret.slice(0, DISPLAY_CHARS)}`,
  };
}

/**
 * Whether `presented` has the shape of one of our keys. Checked before any
 * hashing or database work so garbage is refused cheaply.
 */
export function isWellFormedApiKey(servicePrefix: string, presented: string): boolean {
  if (presented.length !== servicePrefix.length + 1 + SECRET_LENGTH) return false;
  if (!presented.startsWith(`${servicePrefix}_`)) return false;
  return /^[0-9A-Za-z]+$/.test(presented.slice(servicePrefix.length + 1));
}

/** The stored form of a key: HMAC-SHA256 keyed with the pepper (32 bytes). */
export function hashApiKey(pepper: string, fullKey: string): Buffer {
  return createHmac("sha256", pepper).update(fullKey, "utf8").digest();
}

/** Constant-time comparison of two key hashes. */
export function sameKeyHash(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
