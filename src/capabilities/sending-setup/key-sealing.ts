import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Sealing of secrets the service must store and later use itself (DKIM
 * private keys, webhook signing secrets): AES-256-GCM under a key derived
 * (HKDF-SHA256) from a configured data encryption key, so a copy of the
 * database alone never yields a usable secret.
 *
 * Each sealed value is bound to a `context` (its owner, e.g. company and
 * domain) through the GCM additional data: a sealed key copied onto another
 * company's row does not open there.
 *
 * Keys and rotation (docs/operations.md, "Rotating keys"): the data encryption keys
 * have ids (DATA_ENCRYPTION_KEYS="k2:…,k1:…"). The first key seals; every
 * key opens what was sealed under its id. Values sealed before key ids
 * existed carry none and open with the legacy key (DATA_ENCRYPTION_KEY),
 * which also seals when no key with an id is configured.
 *
 * Formats, base64url parts:
 * - `v1.<iv>.<tag>.<ciphertext>`: the legacy key, no id;
 * - `v2.<keyId>.<iv>.<tag>.<ciphertext>`: the key named `keyId`.
 */
export interface SecretSealer {
  seal(plaintext: string, context: string): string;
  /** Throws when the value was sealed under another key or context, was altered, or names a key not configured. */
  unseal(sealed: string, context: string): string;
}

/** The sealer of a key ring: also tells which key seals, and seals a value again with it (retiring an old key). */
export interface KeyringSealer extends SecretSealer {
  /** The id of the key that seals; null: the legacy key (no key with an id is configured). */
  readonly sealingKeyId: string | null;
  /**
   * `sealed` sealed again under the sealing key, or undefined when it is
   * sealed under it already. Throws, like unseal, when it does not open.
   */
  reseal(sealed: string, context: string): string | undefined;
}

/** A data encryption key with its id (letters, digits, `-` and `_`; the id is stored with every value it seals). */
export interface SealingKey {
  readonly id: string;
  readonly secret: string;
}

export const SEALING_KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;

// Fixed salt and info: the secrets are meant to be random already (HKDF,
// not a password hash); they only separate this use from any other use of
// them, and a keyed key from the legacy derivation.
const HKDF_SALT = "mail-api/secret-sealing";
const LEGACY = { version: "v1", info: "aes-256-gcm/v1" } as const;
const KEYED = { version: "v2", info: "aes-256-gcm/v2" } as const;
const IV_BYTES = 12;
const TAG_BYTES = 16;

function derive(secret: string, info: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, HKDF_SALT, info, 32));
}

function encrypt(key: Buffer, plaintext: string, context: string): Buffer[] {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(Buffer.from(context, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), ciphertext];
}

function decrypt(key: Buffer, iv: string, tag: string, ciphertext: string, context: string): string {
  const decipher = createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"), { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(context, "utf8"));
  decipher.setAuthTag(Buffer.from(tag, "base64url"));
  // final() throws when the tag does not match (wrong key, context or data).
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
}

const b64 = (part: Buffer): string => part.toString("base64url");

/**
 * `legacy`: the key of values without an id (DATA_ENCRYPTION_KEY); `keys`:
 * the keys with ids, the sealing one first (DATA_ENCRYPTION_KEYS). At
 * least one of them.
 */
export function createSecretSealer(legacy: string | undefined, keys: readonly SealingKey[] = []): KeyringSealer {
  if (legacy === "" || (legacy === undefined && keys.length === 0)) throw new Error("the data encryption key must not be empty");
  const legacyKey = legacy === undefined ? undefined : derive(legacy, LEGACY.info);
  const keyed = new Map<string, Buffer>();
  for (const { id, secret } of keys) {
    if (!SEALING_KEY_ID.test(id)) throw new Error(`data encryption key id "${id}": letters, digits, - and _ only (1 to 32)`);
    if (secret === "") throw new Error(`data encryption key ${id} must not be empty`);
    if (keyed.has(id)) throw new Error(`data encryption key id ${id} is used twice`);
    keyed.set(id, derive(secret, KEYED.info));
  }
  const sealing = keys[0];

  const sealer: KeyringSealer = {
    sealingKeyId: sealing?.id ?? null,
    reseal(sealed, context) {
      const plaintext = sealer.unseal(sealed, context);
      return sealingKeyIdOf(sealed) === sealer.sealingKeyId ? undefined : sealer.seal(plaintext, context);
    },
    seal(plaintext, context) {
      if (sealing !== undefined) {
        const key = keyed.get(sealing.id) as Buffer;
        return [KEYED.version, sealing.id, ...encrypt(key, plaintext, context).map(b64)].join(".");
      }
      return [LEGACY.version, ...encrypt(legacyKey as Buffer, plaintext, context).map(b64)].join(".");
    },
    unseal(sealed, context) {
      const parts = sealed.split(".");
      if (parts[0] === LEGACY.version && parts.length === 4) {
        const [, iv, tag, ciphertext] = parts as [string, string, string, string];
        if (legacyKey === undefined) throw new Error("sealed value: sealed under the legacy key (no id), which is not configured");
        return decrypt(legacyKey, iv, tag, ciphertext, context);
      }
      if (parts[0] === KEYED.version && parts.length === 5) {
        const [, id, iv, tag, ciphertext] = parts as [string, string, string, string, string];
        const key = keyed.get(id);
        // The id is ours (stored by seal): safe to name in an error, unlike the key.
        if (key === undefined) throw new Error(`sealed value: sealed under key id ${SEALING_KEY_ID.test(id) ? id : "?"}, which is not configured`);
        return decrypt(key, iv, tag, ciphertext, context);
      }
      throw new Error("sealed value: unknown format");
    },
  };
  return sealer;
}

/** The id of the key a sealed value names: `null` for the legacy key, undefined for an unknown format. */
export function sealingKeyIdOf(sealed: string): string | null | undefined {
  const parts = sealed.split(".");
  if (parts[0] === LEGACY.version && parts.length === 4) return null;
  if (parts[0] === KEYED.version && parts.length === 5) return parts[1];
  return undefined;
}
