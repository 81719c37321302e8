import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { contactPageQuery } from "../../../../src/adapters/postgres/contacts/contact-queries.ts";
import { openOrm, type MikroORM } from "../../../../src/adapters/postgres/orm.ts";
import { createContactsCapability } from "../../../../src/wiring/contacts.ts";
import { AUDIT, CURSOR_SECRET, openContactsHarness, type ContactsHarness } from "../../../capabilities/contacts/harness.ts";

/** The PostgreSQL side of the contacts: concurrency across processes, locks, and the indexes the reads rely on. */
describe("PostgreSQL contact store", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  it("creates one contact when two processes write one address at once, and records one `created` event", async () => {
    const companyId = await h.newCompany();
    const others: MikroORM[] = [];
    try {
      const processes = [h.contacts];
      for (let i = 0; i < 2; i++) {
        const orm = await openOrm(h.db.url, { poolMax: 4 });
        others.push(orm);
        processes.push(createContactsCapability(orm, { cursorSecret: CURSOR_SECRET }).contacts);
      }
      const answers = await Promise.all(
        Array.from({ length: 24 }, (_, i) =>
          (processes[i % processes.length] ?? h.contacts).upsert({ companyId, email: "Same@Example.com", tags: [`t${i}`] }),
        ),
      );
      expect(answers.filter((a) => a.created)).toHaveLength(1);
      const { rows } = await h.db.query<{ n: string }>(`select count(*) as n from contact where company_id = $1`, [companyId]);
      expect(rows[0]?.n).toBe("1");
      const changes = (await h.events(companyId)).map((e) => e.data.change);
      expect(changes.filter((c) => c === "created")).toHaveLength(1);
      // Each write was applied to the contact the previous one left: 23 tag changes after the creation.
      expect(changes).toHaveLength(24);
      // And the events of the one contact are stamped in the order the writes committed.
      const occurred = (await h.events(companyId)).map((e) => e.occurredAt.getTime());
      expect(new Set(occurred).size).toBe(24);
    } finally {
      for (const orm of others) await orm.close();
    }
  });

  it("a list deleted while a write naming it waits answers NOT_FOUND and writes nothing", async () => {
    const companyId = await h.newCompany();
    const list = await h.lists.create({ companyId, name: "Going", audit: AUDIT });
    const client = new pg.Client({ connectionString: h.db.url });
    await client.connect();
    try {
      await client.query("begin");
      await client.query(`delete from contact_list where id = $1`, [list.id]);
      // The write's FOR KEY SHARE waits for the delete to end, then finds no list.
      const write = h.contacts.upsert({ companyId, email: "w@example.com", listIds: [list.id] });
      const settled = write.then(
        () => "written",
        (error: { code?: string }) => error.code,
      );
      await new Promise((resolve) => setTimeout(resolve, 200));
      await client.query("commit");
      expect(await settled).toBe("NOT_FOUND");
    } finally {
      await client.end();
    }
    const { rows } = await h.db.query(`select 1 from contact where company_id = $1`, [companyId]);
    expect(rows).toHaveLength(0);
    expect(await h.events(companyId)).toEqual([]);
  });

  describe("indexes of the list reads", () => {
    let companyId: string;

    beforeAll(async () => {
      companyId = await h.newCompany();
      const other = await h.newCompany();
      // Enough rows, in two companies, for the planner to prefer an index for a selective filter.
      for (const id of [companyId, other]) {
        await h.db.query(
          `insert into contact (company_id, email, email_normalized, first_name, last_name, tags, status, created_at)
           select $1, 'user' || g || '@example.com', 'user' || g || '@example.com', 'First' || g, 'Last' || g,
                  case when g % 1000 = 0 then array['rare'] else array['common'] end,
                  case when g % 500 = 0 then 'bounced' else 'subscribed' end,
                  now() - g * interval '1 second'
             from generate_series(1, 6000) as g`,
          [id],
        );
      }
      await h.db.query(`insert into contact (company_id, email, email_normalized, first_name, last_name, status)
                        values ($1, 'ada@example.com', 'ada@example.com', 'Ada', 'Lovelace', 'pending')`, [companyId]);
      // VACUUM also moves the GIN indexes' pending entries into the index proper (autovacuum's job in production):
      // until then the planner prices a GIN scan at the cost of reading that list.
      await h.db.query(`vacuum analyze contact`);
    });

    async function plan(filters: { q?: string; tag?: string; status?: "bounced" }): Promise<string> {
      const query = contactPageQuery(companyId, { status: filters.status, q: filters.q, tag: filters.tag, listId: undefined }, null, 26);
      const { rows } = await h.db.query<{ "QUERY PLAN": string }>(`explain ${query.text}`, query.values);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    }

    it("q uses the pg_trgm index (the query's search text is exactly the index expression)", async () => {
      expect(await plan({ q: "lovelace" })).toContain("contact_search_index");
    });

    it("a rare tag uses the tags GIN index; a status walks its ordered index", async () => {
      expect(await plan({ tag: "rare" })).toContain("contact_tags_index");
      expect(await plan({ status: "bounced" })).toContain("contact_status_index");
    });

    it("the search finds the row through the index", async () => {
      const page = await h.contacts.list({ companyId, q: "LOVELACE" });
      expect(page.items.map((c) => c.email)).toEqual(["ada@example.com"]);
    });
  });
});
