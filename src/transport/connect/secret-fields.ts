import { clearField, clone, type DescField, type DescMessage, isFieldSet, type MessageShape } from "@bufbuild/protobuf";

/**
 * Secrets are never kept for idempotent replays: a
 * response field that holds a secret (a webhook signing secret, an API key
 * secret, a sign-in link token) is declared in the contract with the
 * standard protobuf option `[debug_redact = true]`, and this is the one
 * place that reads it. The idempotency wrapper stores the answer without
 * those fields; a replay answers the record without them and says which
 * were left out in `Idempotent-Redacted` (their JSON names, comma-separated).
 * A new RPC that answers a secret gets the same treatment by declaring the
 * option: nothing here names a service or a field.
 */

/** True when the contract marks the field as holding a secret. */
export function isSecretField(field: DescField): boolean {
  return field.proto.options?.debugRedact === true;
}

/** Whether a message type can hold a secret anywhere inside it (cycles guarded). */
export function holdsSecrets(desc: DescMessage, seen: Set<string> = new Set()): boolean {
  if (seen.has(desc.typeName)) return false;
  seen.add(desc.typeName);
  for (const field of desc.fields) {
    if (isSecretField(field)) return true;
    const inner =
      field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message") || (field.fieldKind === "map" && field.mapKind === "message")
        ? field.message
        : undefined;
    if (inner && holdsSecrets(inner, seen)) return true;
  }
  return false;
}

/**
 * A copy of `message` with every secret field cleared, at any depth, and
 * the JSON paths of the fields that were set (`secret`, `key.secret`).
 * The message itself is left as it is (it is the caller's fresh answer).
 */
export function withoutSecrets<Desc extends DescMessage>(desc: Desc, message: MessageShape<Desc>): { message: MessageShape<Desc>; redacted: string[] } {
  const copy = clone(desc, message);
  const redacted: string[] = [];
  clearSecrets(desc, copy as MessageShape<DescMessage>, "", redacted);
  return { message: copy, redacted: [...new Set(redacted)] };
}

function clearSecrets(desc: DescMessage, message: MessageShape<DescMessage>, prefix: string, redacted: string[]): void {
  const fields = message as unknown as Record<string, unknown>;
  for (const field of desc.fields) {
    const path = `${prefix}${field.jsonName}`;
    if (isSecretField(field)) {
      if (isFieldSet(message, field)) redacted.push(path);
      clearField(message, field);
      continue;
    }
    const value = fields[field.localName];
    if (field.fieldKind === "message" && value !== undefined) {
      clearSecrets(field.message, value as MessageShape<DescMessage>, `${path}.`, redacted);
    } else if (field.fieldKind === "list" && field.listKind === "message" && Array.isArray(value)) {
      for (const item of value) clearSecrets(field.message, item as MessageShape<DescMessage>, `${path}.`, redacted);
    } else if (field.fieldKind === "map" && field.mapKind === "message" && value !== null && typeof value === "object") {
      for (const item of Object.values(value as Record<string, unknown>)) clearSecrets(field.message, item as MessageShape<DescMessage>, `${path}.`, redacted);
    }
  }
  // Oneof members that are messages live under the oneof's local name.
  for (const oneof of desc.oneofs) {
    const holder = fields[oneof.localName] as { case?: string; value?: unknown } | undefined;
    if (!holder?.case) continue;
    const member = oneof.fields.find((f) => f.localName === holder.case);
    if (!member) continue;
    // A secret member was cleared above (desc.fields lists oneof members too).
    if (member.fieldKind === "message" && holder.value !== undefined) {
      clearSecrets(member.message, holder.value as MessageShape<DescMessage>, `${prefix}${member.jsonName}.`, redacted);
    }
  }
}
