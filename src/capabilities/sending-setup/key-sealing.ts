import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Sealing of secrets the service must store and later use itself (DKIM
 * private keys): AES-256-GCM under a key derived from the
 * DATA_ENCRYPTION_KEY setting, so a copy of the database alone never yields
 * a usable signing key.
 *
 * Each sealed value is bound to a `context` (its owner, e.g. company and
 * domain) through the GCM additional data: a sealed key copied onto another
 * company's row does not open there.
 *
 * Format: `v1.<iv>.<tag>.<ciphertext>`, base64url parts. The version names
 * the derivation and cipher, so a later key rotation can tell old from new.
 */
export interface SecretSealer {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was sealed under another key or context, or was altered. */
  unseal(sealed: string, context: string): string;
}

const VERSION = "v1";
// Fixed salt and info: the secret is meant to be random already (HKDF, not a
// password hash); they only separate this use from any other use of it.
const HKDF_SALT = "mail-api/secret-sealing";
const HKDF_INFO = "aes-256-gcm/v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function createSecretSealer(secret: string): SecretSealer {
  if (secret === "") throw new Error("the data encryption key must not be empty");
  const key = Buffer.from(hkdfSync("sha256", secret, HKDF_SALT, HKDF_INFO, 32));

  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(context, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".");
    },
    unseal(sealed, context) {
      const [version, iv, tag, ciphertext, ...rest] = sealed.split(".");
      if (version !== VERSION || iv === undefined || tag === undefined || ciphertext === undefined || rest.length > 0) {
        throw new Error("sealed value: unknown format");
      }
      const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"), { authTagLength: TAG_BYTES });
      decipher.setAAD(Buffer.from(context, "utf8"));
      decipher.setAuthTag(Buffer.from(tag, "base64url"));
      // final() throws when the tag does not match (wrong key, context or data).
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
    },
  };
}
