import { toDate } from "../sql.ts";
import type { ContactRow, MemberRow } from "./contact-queries.ts";
import { isContactStatus, type AttributeValue, type ContactRecord, type ContactStatusName } from "../../../capabilities/contacts/index.ts";

/** Attributes are written flat; anything else in the column is left out rather than passed on untyped. */
function attributesOf(value: unknown): Record<string, AttributeValue> {
  const parsed: unknown = typeof value === "string" ? JSON.parse(value) : value;
  const attributes: Record<string, AttributeValue> = {};
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return attributes;
  for (const [key, item] of Object.entries(parsed)) {
    if (item === null || typeof item === "string" || typeof item === "number" || typeof item === "boolean") attributes[key] = item;
  }
  return attributes;
}

/** The check constraint allows only contact statuses; a value outside them means the schema moved on without this code. */
function statusOf(value: string): ContactStatusName {
  if (!isContactStatus(value)) throw new Error(`contact: unknown stored status ${JSON.stringify(value)}`);
  return value;
}

export function contactRecord(row: ContactRow, listIds: readonly string[]): ContactRecord {
  return {
    id: row.id,
    email: row.email,
    firstName: row.first_name,
    lastName: row.last_name,
    company: row.company_name,
    phone: row.phone,
    locale: row.locale,
    attributes: attributesOf(row.attributes),
    tags: [...row.tags],
    listIds: [...listIds].sort(),
    status: statusOf(row.status),
    consent:
      row.consent_source === null || row.consent_at === null
        ? null
        : { source: row.consent_source, at: toDate(row.consent_at), reference: row.consent_reference },
    createdAt: toDate(row.created_at),
    updatedAt: toDate(row.updated_at),
  };
}

/** List ids by contact id. */
export function listIdsByContact(rows: readonly MemberRow[]): Map<string, string[]> {
  const byContact = new Map<string, string[]>();
  for (const row of rows) {
    let ids = byContact.get(row.contact_id);
    if (!ids) byContact.set(row.contact_id, (ids = []));
    ids.push(row.list_id);
  }
  return byContact;
}
