import { createHash, randomBytes } from "node:crypto";

/**
 * Sign-in link tokens and session cookie values: 32 random bytes, written
 * in base64url (43 characters). Only SHA-256 of one is ever stored; a
 * presented value is looked up by its hash (an equality on a unique index
 * of a hash leaks nothing useful about the stored value).
 */
const TOKEN_BYTES = 32;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString("base64url");
}

export function isWellFormedToken(value: string): boolean {
  return TOKEN_SHAPE.test(value);
}

export function tokenHash(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}
