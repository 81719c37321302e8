import type { Pool, PoolClient } from "../sql.ts";
import { inTransaction, rollback } from "../transaction.ts";
import type {
  ContactEventDraft,
  ContactStore,
  ContactWriteOutcome,
  ContactWriteRequest,
} from "../../../capabilities/contacts/ports.ts";
import type { ContactRecord, ContactState } from "../../../capabilities/contacts/index.ts";
import {
  CONTACT_COLUMNS,
  contactByIdQuery,
  contactByKeyQuery,
  contactPageQuery,
  membershipsQuery,
  type ContactRow,
  type MemberRow,
} from "./contact-queries.ts";
import { contactRecord, listIdsByContact } from "./contact-rows.ts";

type Db = () => Promise<Pool>;
type Queryable = Pick<PoolClient, "query">;

/** A write that found its contact gone between the insert and the lock (deleted with its company) tries again, this often. */
const WRITE_ATTEMPTS = 3;

/**
 * The ContactStore port on PostgreSQL: plain SQL on the pg pool, because a
 * write is an upsert with a row lock, its memberships and its outbox row in
 * one transaction, and the reads are the hot paths of the contact API
 * (contact-queries.ts has their plans).
 *
 * Concurrent writes of one address: each tries `insert ... on conflict
 * (company_id, email_normalized) do nothing`; PostgreSQL lets exactly one
 * insert, the others wait for it to commit, find no row inserted, lock the
 * winner's row (`for update`) and apply their write to it, one after the
 * other. So one address is one contact, and every write's rules see the
 * state the previous write left.
 */
export function postgresContactStore(db: Db): ContactStore {
  async function withLists(client: Queryable, companyId: string, rows: readonly ContactRow[]): Promise<ContactRecord[]> {
    if (rows.length === 0) return [];
    const members = await client.query<MemberRow>(
      membershipsQuery(
        companyId,
        rows.map((row) => row.id),
      ),
    );
    const lists = listIdsByContact(members.rows);
    return rows.map((row) => contactRecord(row, lists.get(row.id) ?? []));
  }

  async function one(client: Queryable, companyId: string, query: { text: string; values: unknown[] }): Promise<ContactRecord | undefined> {
    const { rows } = await client.query<ContactRow>(query);
    return (await withLists(client, companyId, rows))[0];
  }

  /** The outcome of one attempt; null when the contact vanished under it (try again). */
  async function attempt(tx: PoolClient, request: ContactWriteRequest): Promise<ContactWriteOutcome | null> {
    const { companyId, key, listIds } = request;
    if (listIds.length > 0) {
      // FOR KEY SHARE: a list cannot be deleted between this check and the commit.
      const found = await tx.query<{ id: string }>(
        `select id from contact_list where company_id = $1 and id = any($2::uuid[]) for key share`,
        [companyId, listIds],
      );
      const known = new Set(found.rows.map((row) => row.id));
      const missing = listIds.filter((id) => !known.has(id));
      if (missing.length > 0) return { kind: "unknown-lists", listIds: missing };
    }

    const fresh = request.decide(undefined);
    const inserted = await tx.query<ContactRow>(
      `insert into contact as c (id, company_id, email, email_normalized, first_name, last_name, company_name, phone, locale,
                                 attributes, tags, status, consent_source, consent_at, consent_reference, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::text[], $12, $13, $14, $15, $16, $16)
       on conflict (company_id, email_normalized) do nothing
       returning ${CONTACT_COLUMNS}`,
      [request.newId, companyId, ...stateValues(fresh.state, key), fresh.at],
    );
    const row = inserted.rows[0];
    if (row) {
      await addMemberships(tx, companyId, row.id, fresh.state.listIds);
      if (fresh.event) await recordEvent(tx, companyId, fresh.event);
      return { kind: "written", contact: contactRecord(row, fresh.state.listIds), created: true };
    }

    const current = await one(tx, companyId, contactByKeyQuery(companyId, key, true));
    if (!current) return null;
    const decision = request.decide(current);
    if (!decision.event) return { kind: "written", contact: current, created: false };

    const updated = await tx.query<ContactRow>(
      `update contact c set email = $3, email_normalized = $4, first_name = $5, last_name = $6, company_name = $7, phone = $8,
              locale = $9, attributes = $10::jsonb, tags = $11::text[], status = $12, consent_source = $13, consent_at = $14,
              consent_reference = $15, updated_at = $16
        where c.company_id = $1 and c.id = $2
        returning ${CONTACT_COLUMNS}`,
      [companyId, current.id, ...stateValues(decision.state, key), decision.at],
    );
    const after = updated.rows[0];
    if (!after) return null;
    await replaceMemberships(tx, companyId, current.id, current.listIds, decision.state.listIds);
    await recordEvent(tx, companyId, decision.event);
    return { kind: "written", contact: contactRecord(after, decision.state.listIds), created: false };
  }

  return {
    async write(request) {
      for (let i = 0; i < WRITE_ATTEMPTS; i++) {
        const outcome = await inTransaction<ContactWriteOutcome | null>(db, async (tx) => {
          const result = await attempt(tx, request);
          // Nothing of a failed attempt is kept.
          return result === null || result.kind === "unknown-lists" ? rollback(result) : result;
        });
        if (outcome !== null) return outcome;
      }
      throw new Error("contact write: the contact vanished under every attempt");
    },

    async findById(companyId, id) {
      return one(await db(), companyId, contactByIdQuery(companyId, id));
    },

    async findByKey(companyId, key) {
      return one(await db(), companyId, contactByKeyQuery(companyId, key));
    },

    async page(companyId, filters, after, rows) {
      const pool = await db();
      const found = await pool.query<ContactRow>(contactPageQuery(companyId, filters, after, rows));
      const records = await withLists(pool, companyId, found.rows);
      return records.map((item, i) => ({ item, position: { createdAt: found.rows[i]?.position_at ?? "", id: item.id } }));
    },

    async setStatusIf(companyId, key, status, from, at) {
      const pool = await db();
      const { rowCount } = await pool.query(
        `update contact set status = $3, updated_at = greatest(updated_at, $5)
          where company_id = $1 and email_normalized = $2 and status = any($4::text[])`,
        [companyId, key, status, [...from], at],
      );
      return (rowCount ?? 0) > 0;
    },
  };
}

/** Parameters $3..$15 of the insert and the update, in their column order. */
function stateValues(state: ContactState, key: string): unknown[] {
  return [
    state.email,
    key,
    state.firstName,
    state.lastName,
    state.company,
    state.phone,
    state.locale,
    JSON.stringify(state.attributes),
    [...state.tags],
    state.status,
    state.consent?.source ?? null,
    state.consent?.at ?? null,
    state.consent?.reference ?? null,
  ];
}

async function addMemberships(tx: Queryable, companyId: string, contactId: string, listIds: readonly string[]): Promise<void> {
  if (listIds.length === 0) return;
  await tx.query(
    `insert into contact_list_member (company_id, list_id, contact_id)
     select $1, list_id, $2 from unnest($3::uuid[]) as list_id
     on conflict do nothing`,
    [companyId, contactId, [...listIds]],
  );
}

async function replaceMemberships(
  tx: Queryable,
  companyId: string,
  contactId: string,
  before: readonly string[],
  after: readonly string[],
): Promise<void> {
  const keep = new Set(after);
  const gone = before.filter((id) => !keep.has(id));
  if (gone.length > 0) {
    await tx.query(`delete from contact_list_member where company_id = $1 and contact_id = $2 and list_id = any($3::uuid[])`, [
      companyId,
      contactId,
      gone,
    ]);
  }
  const had = new Set(before);
  await addMemberships(
    tx,
    companyId,
    contactId,
    after.filter((id) => !had.has(id)),
  );
}

/** The `contact.updated` outbox row, in the transaction of the change it reports. */
async function recordEvent(tx: Queryable, companyId: string, event: ContactEventDraft): Promise<void> {
  await tx.query(
    `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
     values ($1, $2, $3, $4::jsonb, $5)
     on conflict (dedupe_key) do nothing`,
    [companyId, event.event, event.occurredAt, JSON.stringify(event.data), event.dedupeKey],
  );
}
