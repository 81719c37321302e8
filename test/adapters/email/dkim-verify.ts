/**
 * Minimal DKIM verifier (RFC 6376, rsa-sha256, relaxed/relaxed only) for
 * tests: checking that a DKIM-Signature header merely exists would not catch
 * a signature over the wrong headers or body. No DNS: the caller passes the
 * public key.
 */
import { createHash, verify, type KeyObject } from "node:crypto";

interface HeaderField {
  readonly name: string;
  /** Everything after the colon, folding (CRLF + WSP) kept. */
  readonly value: string;
}

export interface DkimCheck {
  readonly tags: Readonly<Record<string, string>>;
  readonly bodyHashMatches: boolean;
  readonly signatureValid: boolean;
}

export function splitMessage(raw: string): { headers: HeaderField[]; body: string } {
  const end = raw.indexOf("\r\n\r\n");
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? "" : raw.slice(end + 4);
  const headers: HeaderField[] = [];
  for (const line of head.split("\r\n")) {
    const last = headers.at(-1);
    if (/^[ \t]/.test(line) && last) {
      headers[headers.length - 1] = { name: last.name, value: `${last.value}\r\n${line}` };
      continue;
    }
    const colon = line.indexOf(":");
    headers.push({ name: line.slice(0, colon), value: line.slice(colon + 1) });
  }
  return { headers, body };
}

/** Unfolded header value with whitespace runs collapsed (for reading, and relaxed canonicalization). */
export function unfold(value: string): string {
  return value.replace(/\r\n/g, "").replace(/[ \t]+/g, " ").trim();
}

function relaxedHeader(field: HeaderField): string {
  return `${field.name.trim().toLowerCase()}:${unfold(field.value)}`;
}

function relaxedBody(body: string): string {
  const lines = body.split("\r\n").map((line) => line.replace(/[ \t]+/g, " ").replace(/ $/, ""));
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines.length === 0 ? "" : `${lines.join("\r\n")}\r\n`;
}

export function checkDkim(raw: string, publicKey: KeyObject): DkimCheck {
  const { headers, body } = splitMessage(raw);
  const signatureField = headers.find((field) => field.name.toLowerCase() === "dkim-signature");
  if (!signatureField) throw new Error("no DKIM-Signature header");

  const tags: Record<string, string> = {};
  for (const part of signatureField.value.replace(/\r\n/g, "").split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    tags[part.slice(0, eq).trim()] = part.slice(eq + 1).replace(/[ \t]/g, "");
  }
  if (tags.a !== "rsa-sha256" || tags.c !== "relaxed/relaxed") throw new Error("unsupported DKIM algorithm");

  const bodyHash = createHash("sha256").update(relaxedBody(body), "utf8").digest("base64");

  // Signed headers are taken bottom-up, one instance per listed name (RFC 6376 5.4.2).
  const used = new Set<HeaderField>();
  let signedData = "";
  for (const name of (tags.h ?? "").split(":")) {
    const instance = headers.findLast(
      (field) => field.name.toLowerCase() === name.trim().toLowerCase() && !used.has(field),
    );
    if (!instance) continue;
    used.add(instance);
    signedData += `${relaxedHeader(instance)}\r\n`;
  }
  const withoutSignature = signatureField.value.replace(/(^|;)([ \t\r\n]*b[ \t\r\n]*=)[^;]*/, "$1$2");
  signedData += relaxedHeader({ name: signatureField.name, value: withoutSignature });

  return {
    tags,
    bodyHashMatches: bodyHash === tags.bh,
    signatureValid: verify("sha256", Buffer.from(signedData, "utf8"), publicKey, Buffer.from(tags.b ?? "", "base64")),
  };
}
