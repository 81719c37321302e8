import { randomBytes } from "node:crypto";

/**
 * A new form's public id: 12 random bytes in base64url (16 characters,
 * 96 bits). Random rather than sequential so that one form's address tells
 * nothing about the others and cannot be guessed. Drawn again when it would
 * begin with "-" or "_": such an id reads as an option on command lines and
 * is easy to lose when copied (entropy lost: under 0.05 bits).
 */
export function newPublicId(): string {
  for (;;) {
    const id = randomBytes(12).toString("base64url");
    if (/^[A-Za-z0-9]/.test(id)) return id;
  }
}

/** Whether a path segment can be a public id at all (saves a lookup of junk). */
export function isPublicIdShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{8,64}$/.test(value);
}
