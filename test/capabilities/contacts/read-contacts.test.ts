import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTACT_CURSOR, type ContactRecord, type ListContactsCommand } from "../../../src/capabilities/contacts/index.ts";
import { MESSAGE_LOG_CURSOR } from "../../../src/capabilities/messages/read/index.ts";
import { createKeysetCursorCodec } from "../../../src/capabilities/shared/keyset-cursor.ts";
import { apiErrorOf, AUDIT, CURSOR_SECRET, fieldsNamed, openContactsHarness, type ContactsHarness } from "./harness.ts";

/** A list query as the tests write it: the company is the walk's. */
type ListContactsOptions = Omit<ListContactsCommand, "companyId">;

describe("GET /mail/v1/contacts and /mail/v1/contacts/{id}", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  async function walk(companyId: string, options: ListContactsOptions, between?: () => Promise<void>): Promise<ContactRecord[]> {
    const items: ContactRecord[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await h.contacts.list({ companyId, ...options, cursor });
      items.push(...page.items);
      if (page.nextCursor === null) return items;
      cursor = page.nextCursor;
      await between?.();
    }
    throw new Error("walk did not end");
  }

  describe("one contact", () => {
    it("is found by id or by address in any spelling", async () => {
      const companyId = await h.newCompany();
      const { contact } = await h.contacts.upsert({ companyId, email: "Ada+News@Bücher.example" });
      for (const key of [contact.id, contact.id.toUpperCase(), "ada+news@bücher.example", "ADA+NEWS@XN--BCHER-KVA.EXAMPLE", " ada+news@xn--bcher-kva.example "]) {
        expect(await h.contacts.get({ companyId, idOrEmail: key }), key).toEqual(contact);
      }
    });

    it("is NOT_FOUND when unknown, malformed or another company's", async () => {
      const companyId = await h.newCompany();
      const other = await h.newCompany();
      const { contact } = await h.contacts.upsert({ companyId: other, email: "theirs@example.com" });
      for (const key of [contact.id, "theirs@example.com", crypto.randomUUID(), "nobody@example.com", "not-an-id", "", "a@b@c"]) {
        await apiErrorOf(h.contacts.get({ companyId, idOrEmail: key }), "NOT_FOUND");
      }
    });
  });

  describe("the list", () => {
    it("walks every contact once, newest first, in pages of the given size", async () => {
      const companyId = await h.newCompany();
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) ids.push((await h.contacts.upsert({ companyId, email: `walk${i}@example.com` })).contact.id);
      const first = await h.contacts.list({ companyId, limit: 10 });
      expect(first.items).toHaveLength(10);
      expect(first.nextCursor).not.toBeNull();
      expect((await walk(companyId, { limit: 10 })).map((c) => c.id)).toEqual([...ids].reverse());
      // Default page size 25: one page, no cursor.
      const all = await h.contacts.list({ companyId });
      expect(all.items).toHaveLength(23);
      expect(all.nextCursor).toBeNull();
    });

    it("breaks ties of one creation time by id and neither repeats nor skips rows created meanwhile", async () => {
      const companyId = await h.newCompany();
      for (let i = 0; i < 9; i++) await h.contacts.upsert({ companyId, email: `tie${i}@example.com` });
      await h.db.query(`update contact set created_at = '2030-01-01T00:00:00Z' where company_id = $1`, [companyId]);
      const expected = (await h.db.query<{ id: string }>(`select id from contact where company_id = $1 order by id desc`, [companyId])).rows.map(
        (r) => r.id,
      );
      let n = 0;
      const walked = await walk(companyId, { limit: 2 }, async () => {
        await h.contacts.upsert({ companyId, email: `meanwhile${n++}@example.com` });
      });
      expect(walked.map((c) => c.id)).toEqual(expected);
    });

    it("filters by status, tag, list and q, each with its own pagination", async () => {
      const companyId = await h.newCompany();
      const list = await h.lists.create({ companyId, name: "Buyers", audit: AUDIT });
      const people = [
        { email: "ada@example.com", firstName: "Ada", lastName: "Lovelace", tags: ["vip"], listIds: [list.id], consent: { source: "x" } },
        { email: "grace@navy.example", firstName: "Grace", lastName: "Hopper", tags: ["vip", "beta"] },
        { email: "alan@example.org", firstName: "Alan", lastName: "Turing", listIds: [list.id], status: "unsubscribed" },
        { email: "100%_real@example.com", firstName: "Percent" },
      ];
      for (const person of people) await h.contacts.upsert({ companyId, ...person });
      const emails = async (options: ListContactsOptions) => (await walk(companyId, { ...options, limit: 1 })).map((c) => c.email);

      expect(await emails({ status: "subscribed" })).toEqual(["ada@example.com"]);
      expect(await emails({ status: "pending" })).toEqual(["100%_real@example.com", "grace@navy.example"]);
      expect(await emails({ status: "bounced" })).toEqual([]);
      expect(await emails({ tag: "vip" })).toEqual(["grace@navy.example", "ada@example.com"]);
      expect(await emails({ tag: "VIP" })).toEqual([]);
      expect(await emails({ listId: list.id })).toEqual(["alan@example.org", "ada@example.com"]);
      expect(await emails({ listId: list.id, status: "unsubscribed" })).toEqual(["alan@example.org"]);
      // q: part of the address, first or last name, any case; % and _ are literal.
      expect(await emails({ q: "HOPP" })).toEqual(["grace@navy.example"]);
      expect(await emails({ q: "example.org" })).toEqual(["alan@example.org"]);
      expect(await emails({ q: "ada lovelace" })).toEqual(["ada@example.com"]);
      expect(await emails({ q: "a" })).toHaveLength(4);
      expect(await emails({ q: "%_" })).toEqual(["100%_real@example.com"]);
      expect(await emails({ q: "_" })).toEqual(["100%_real@example.com"]);
      expect(await emails({ q: "nobody" })).toEqual([]);
      // Empty parameters are no filter.
      expect(await emails({ q: "", tag: "", listId: "" })).toHaveLength(4);
    });

    it("answers NOT_FOUND for a listId that is not a list of the company", async () => {
      const companyId = await h.newCompany();
      const other = await h.newCompany();
      const theirs = await h.lists.create({ companyId: other, name: "Theirs", audit: AUDIT });
      for (const listId of [theirs.id, crypto.randomUUID(), "nope"]) {
        await apiErrorOf(h.contacts.list({ companyId, listId }), "NOT_FOUND");
      }
    });

    it("validates limit, status and q, naming each", async () => {
      const companyId = await h.newCompany();
      expect(await fieldsNamed(h.contacts.list({ companyId, limit: 0, status: "active", q: "x".repeat(201) }))).toEqual([
        "limit",
        "status",
        "q",
      ]);
      expect(await fieldsNamed(h.contacts.list({ companyId, limit: 101 }))).toEqual(["limit"]);
      expect(await fieldsNamed(h.contacts.list({ companyId, q: "a\0b", tag: "\0" }))).toEqual(["q", "tag"]);
    });

    it("refuses a cursor that was edited, made for other filters, another company, or the message log", async () => {
      const companyId = await h.newCompany();
      const other = await h.newCompany();
      for (let i = 0; i < 3; i++) {
        await h.contacts.upsert({ companyId, email: `c${i}@example.com`, tags: ["t"] });
        await h.contacts.upsert({ companyId: other, email: `c${i}@example.com`, tags: ["t"] });
      }
      const page = await h.contacts.list({ companyId, limit: 1, tag: "t" });
      const cursor = page.nextCursor ?? "";
      expect((await h.contacts.list({ companyId, limit: 1, tag: "t", cursor })).items).toHaveLength(1);

      const edited = `${cursor.slice(0, 10)}${cursor[10] === "A" ? "B" : "A"}${cursor.slice(11)}`;
      const position = { createdAt: "2030-01-01T00:00:00.000000Z", id: page.items[0]?.id ?? "" };
      const forged = [
        edited,
        "garbage",
        createKeysetCursorCodec("another-secret", CONTACT_CURSOR).encode(companyId, "x", position),
        createKeysetCursorCodec(CURSOR_SECRET, MESSAGE_LOG_CURSOR).encode(companyId, "x", position),
      ];
      for (const bad of forged) expect(await fieldsNamed(h.contacts.list({ companyId, tag: "t", cursor: bad }))).toEqual(["cursor"]);
      // Valid, but for other filters or for another company.
      expect(await fieldsNamed(h.contacts.list({ companyId, tag: "u", cursor }))).toEqual(["cursor"]);
      expect(await fieldsNamed(h.contacts.list({ companyId: other, tag: "t", cursor }))).toEqual(["cursor"]);
    });

    it("pages with a cursor of the fixed format, so cursors in flight survive a deploy", async () => {
      // MAC context mail.v1.contacts.cursor.v1, fingerprint of (status, q, tag, listId): issued for this company,
      // filter tag=golden, after (2030-01-01T12:00:00.000000Z, ffffffff-…).
      const companyId = "5e0c7a52-0c1d-4d6e-9f3a-2b7c8d9e0f11";
      const issued =
        "eyJjIjoiNWUwYzdhNTItMGMxZC00ZDZlLTlmM2EtMmI3YzhkOWUwZjExIiwiZiI6IkI5Q2RPcVRsbG8teGFWV3ZaRXpaUEEiLCJ0IjoiMjAzMC0wMS0wMVQxMjowMDowMC4wMDAwMDBaIiwiaSI6ImZmZmZmZmZmLWZmZmYtNGZmZi1iZmZmLWZmZmZmZmZmZmZmZiJ9oK20WjXzHVrB5tpV7_D4LazP4BOtWV8yUPufHeQu2ik";
      await h.db.query(`insert into company (id, name) values ($1, 'Golden')`, [companyId]);
      await h.contacts.upsert({ companyId, email: "before@example.com", tags: ["golden"] });
      await h.contacts.upsert({ companyId, email: "after@example.com", tags: ["golden"] });
      await h.db.query(`update contact set created_at = '2029-12-31T00:00:00Z' where company_id = $1 and email = 'before@example.com'`, [companyId]);
      await h.db.query(`update contact set created_at = '2030-01-02T00:00:00Z' where company_id = $1 and email = 'after@example.com'`, [companyId]);
      const page = await h.contacts.list({ companyId, tag: "golden", cursor: issued });
      expect(page.items.map((c) => c.email)).toEqual(["before@example.com"]);
      expect(await fieldsNamed(h.contacts.list({ companyId, tag: "other", cursor: issued }))).toEqual(["cursor"]);
    });

    it("shows only the company's own contacts", async () => {
      const a = await h.newCompany();
      const b = await h.newCompany();
      await h.contacts.upsert({ companyId: a, email: "only-a@example.com", tags: ["x"] });
      await h.contacts.upsert({ companyId: b, email: "only-b@example.com", tags: ["x"] });
      expect((await walk(a, { tag: "x" })).map((c) => c.email)).toEqual(["only-a@example.com"]);
      expect((await walk(b, { q: "only" })).map((c) => c.email)).toEqual(["only-b@example.com"]);
    });
  });
});
