import { generateKeyPair, randomBytes } from "node:crypto";
import { promisify } from "node:util";

const generateKeyPairAsync = promisify(generateKeyPair);

/** RSA 2048: the size RFC 8301 asks signers to use, and one TXT record still holds it. */
const RSA_BITS = 2048;

export interface DkimKeyPair {
  /** Base64 DER SubjectPublicKeyInfo: the `p=` tag of the DKIM record as published. */
  readonly publicKey: string;
  /** PKCS#8 PEM, what the signer (nodemailer) takes. */
  readonly privateKeyPem: string;
}

/** A fresh key pair; async because RSA generation takes tens of milliseconds. */
export async function generateDkimKeyPair(): Promise<DkimKeyPair> {
  const { publicKey, privateKey } = await generateKeyPairAsync("rsa", {
    modulusLength: RSA_BITS,
    publicKeyEncoding: { type: "spki", format: "der" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
  return { publicKey: publicKey.toString("base64"), privateKeyPem: privateKey };
}

/**
 * A selector of our own per domain row (`tm` + 8 hex): two companies that
 * add the same domain, or a later key rotation, never compete for one DNS name.
 */
export function newDkimSelector(): string {
  return `tm${randomBytes(4).toString("hex")}`;
}

/** Longest selector newDkimSelector() makes (for the domain length limit). */
export const MAX_SELECTOR_LENGTH = 10;
