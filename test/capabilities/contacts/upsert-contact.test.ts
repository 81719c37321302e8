import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorOf, AUDIT, fieldsNamed, openContactsHarness, type ContactsHarness } from "./harness.ts";

describe("POST /mail/v1/contacts: create or update by email", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  describe("matching by address", () => {
    it("finds the contact whatever the case, surrounding space or domain spelling", async () => {
      const companyId = await h.newCompany();
      const first = await h.contacts.upsert({ companyId, email: "  Kim.Lee@Bücher.Example " });
      expect(first.created).toBe(true);
      expect(first.contact.email).toBe("Kim.Lee@xn--bcher-kva.example");
      for (const spelling of ["kim.lee@xn--bcher-kva.example", "KIM.LEE@BÜCHER.EXAMPLE", "kim.lee@bücher.example"]) {
        const again = await h.contacts.upsert({ companyId, email: spelling });
        expect(again.created, spelling).toBe(false);
        expect(again.contact.id).toBe(first.contact.id);
      }
      // The address shown is the one last written.
      expect((await h.contacts.get({ companyId, idOrEmail: first.contact.id })).email).toBe("kim.lee@xn--bcher-kva.example");
    });

    it("keeps plus addresses distinct from their base address", async () => {
      const companyId = await h.newCompany();
      const plus = await h.contacts.upsert({ companyId, email: "ada+news@example.com" });
      const base = await h.contacts.upsert({ companyId, email: "ada@example.com" });
      expect(base.created).toBe(true);
      expect(base.contact.id).not.toBe(plus.contact.id);
    });

    it("creates one contact when writes of one address race", async () => {
      const companyId = await h.newCompany();
      const writes = Array.from({ length: 12 }, (_, i) =>
        h.contacts.upsert({ companyId, email: i % 2 ? "Race@Example.com" : "race@example.com", attributes: { [`k${i}`]: i } }),
      );
      const answers = await Promise.all(writes);
      expect(answers.filter((a) => a.created)).toHaveLength(1);
      expect(new Set(answers.map((a) => a.contact.id)).size).toBe(1);
      const { rows } = await h.db.query(`select id from contact where company_id = $1`, [companyId]);
      expect(rows).toHaveLength(1);
      // Every write was applied to that one contact, one after the other: the last one's attributes replaced the others'.
      const events = await h.events(companyId);
      expect(events.map((e) => e.data.change)).toEqual(["created", ...Array(11).fill("updated")]);
    });
  });

  describe("fields", () => {
    it("stores every writable field, normalised, and answers created and marketable", async () => {
      const companyId = await h.newCompany();
      const list = await h.lists.create({ companyId, name: "Newsletter", audit: AUDIT });
      const consentAt = new Date("2029-12-31T10:00:00.000Z");
      const answer = await h.contacts.upsert({ companyId, email: "ada@example.com",
        firstName: "  Ada ",
        lastName: "Lovelace",
        company: "Analytical Engines Ltd",
        phone: "+44 20 7946 0958",
        locale: "EN-gb",
        attributes: { plan: "pro", seats: 3, trial: false, referrer: null },
        tags: ["vip", "beta", "vip"],
        listIds: [list.id.toUpperCase()],
        consent: { source: "checkout", at: consentAt, reference: "order-1001" } });
      expect(answer).toMatchObject({ created: true, marketable: true });
      expect(answer.contact).toMatchObject({
        email: "ada@example.com",
        firstName: "Ada",
        lastName: "Lovelace",
        company: "Analytical Engines Ltd",
        phone: "+442079460958",
        locale: "en-GB",
        attributes: { plan: "pro", seats: 3, trial: false, referrer: null },
        tags: ["vip", "beta"],
        listIds: [list.id],
        status: "subscribed",
        consent: { source: "checkout", at: consentAt, reference: "order-1001" },
      });
      expect(await h.contacts.get({ companyId, idOrEmail: "ada@example.com" })).toEqual(answer.contact);
    });

    it("keeps what a write leaves out, clears text fields written empty, replaces attributes, tags and lists when sent", async () => {
      const companyId = await h.newCompany();
      const a = await h.lists.create({ companyId, name: "A", audit: AUDIT });
      const b = await h.lists.create({ companyId, name: "B", audit: AUDIT });
      await h.contacts.upsert({ companyId, email: "bob@example.com",
        firstName: "Bob",
        lastName: "Builder",
        phone: "+14155550123",
        locale: "en",
        attributes: { x: 1, y: 2 },
        tags: ["t1", "t2"],
        listIds: [a.id] });

      const kept = await h.contacts.upsert({ companyId, email: "bob@example.com", company: "Bob & Co" });
      expect(kept.contact).toMatchObject({
        firstName: "Bob",
        lastName: "Builder",
        company: "Bob & Co",
        phone: "+14155550123",
        locale: "en",
        attributes: { x: 1, y: 2 },
        tags: ["t1", "t2"],
        listIds: [a.id],
      });

      const replaced = await h.contacts.upsert({ companyId, email: "bob@example.com",
        lastName: "",
        phone: " ",
        attributes: { z: "new" },
        tags: ["t3"],
        listIds: [b.id, a.id] });
      expect(replaced.contact).toMatchObject({
        firstName: "Bob",
        lastName: null,
        phone: null,
        attributes: { z: "new" },
        tags: ["t3"],
        listIds: [a.id, b.id].sort(),
      });

      const cleared = await h.contacts.upsert({ companyId, email: "bob@example.com", attributes: {}, tags: [], listIds: [] });
      expect(cleared.contact).toMatchObject({ attributes: {}, tags: [], listIds: [] });
      const { rows } = await h.db.query(`select 1 from contact_list_member where contact_id = $1`, [cleared.contact.id]);
      expect(rows).toHaveLength(0);
    });

    it("names every bad field in one VALIDATION_ERROR and writes nothing", async () => {
      const companyId = await h.newCompany();
      const fields = await fieldsNamed(
        h.contacts.upsert({ companyId, email: "not an address",
          firstName: "x".repeat(101),
          lastName: "y".repeat(101),
          company: "z".repeat(201),
          phone: "555-0123",
          locale: "english please",
          attributes: { nested: { a: 1 }, ["k".repeat(41)]: "v", long: "v".repeat(501), list: [1] },
          tags: ["ok", "", 7, "t".repeat(41)],
          listIds: ["a", 1],
          status: "bounced",
          consent: { source: " ", at: new Date(Date.parse("2030-01-01T12:00:00.000Z") + 3_600_000), reference: "r".repeat(201) } }),
      );
      expect(fields).toEqual([
        "email",
        "firstName",
        "lastName",
        "company",
        "phone",
        "locale",
        "attributes.nested",
        `attributes.${"k".repeat(41)}`,
        "attributes.long",
        "attributes.list",
        "tags[1]",
        "tags[2]",
        "tags[3]",
        "listIds[1]",
        "status",
        "consent.source",
        "consent.at",
        "consent.reference",
      ]);
      expect(await h.events(companyId)).toEqual([]);
      const { rows } = await h.db.query(`select 1 from contact where company_id = $1`, [companyId]);
      expect(rows).toHaveLength(0);
    });

    it("enforces the counts: 50 attributes, 50 distinct tags, 20 listIds", async () => {
      const companyId = await h.newCompany();
      const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
      const attributes = (n: number) => Object.fromEntries(many(n, "a").map((k) => [k, k]));
      expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "c@example.com", attributes: attributes(51) }))).toEqual(["attributes"]);
      expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "c@example.com", tags: many(51, "t") }))).toEqual(["tags"]);
      const ids = Array.from({ length: 21 }, () => crypto.randomUUID());
      expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "c@example.com", listIds: ids }))).toEqual(["listIds"]);
      // At the limits, all is well (repeated tags count once).
      const ok = await h.contacts.upsert({ companyId, email: "c@example.com", attributes: attributes(50), tags: [...many(50, "t"), "t0"] });
      expect(Object.keys(ok.contact.attributes)).toHaveLength(50);
      expect(ok.contact.tags).toHaveLength(50);
    });

    it("requires the email", async () => {
      const companyId = await h.newCompany();
      expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "  " }))).toEqual(["email"]);
    });

    it("accepts phone numbers of any country in international form and stores E.164", async () => {
      const companyId = await h.newCompany();
      const cases: [string, string][] = [
        ["+1 (415) 555-0123", "+14155550123"],
        ["+33 6 12 34 56 78", "+33612345678"],
        ["+81-3-1234-5678", "+81312345678"],
      ];
      for (const [written, stored] of cases) {
        expect((await h.contacts.upsert({ companyId, email: "p@example.com", phone: written })).contact.phone).toBe(stored);
      }
      for (const bad of ["4155550123", "+1 555", "+999 123456", "phone"]) {
        expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "p@example.com", phone: bad })), bad).toEqual(["phone"]);
      }
    });

    it("stores locales in canonical BCP 47 form", async () => {
      const companyId = await h.newCompany();
      for (const [written, stored] of [
        ["de-ch", "de-CH"],
        ["ZH-hant-tw", "zh-Hant-TW"],
        ["en", "en"],
      ]) {
        expect((await h.contacts.upsert({ companyId, email: "l@example.com", locale: written })).contact.locale).toBe(stored);
      }
      expect(await fieldsNamed(h.contacts.upsert({ companyId, email: "l@example.com", locale: "en_US!" }))).toEqual(["locale"]);
    });
  });

  describe("lists", () => {
    it("answers NOT_FOUND for an unknown, malformed or another company's list, and writes nothing", async () => {
      const companyId = await h.newCompany();
      const other = await h.newCompany();
      const mine = await h.lists.create({ companyId, name: "Mine", audit: AUDIT });
      const theirs = await h.lists.create({ companyId: other, name: "Theirs", audit: AUDIT });
      for (const listIds of [[mine.id, theirs.id], [crypto.randomUUID()], ["not-a-uuid"]]) {
        const error = await apiErrorOf(h.contacts.upsert({ companyId, email: "l@example.com", listIds }), "NOT_FOUND");
        expect(error.message).toContain(listIds.at(-1) as string);
      }
      await apiErrorOf(h.contacts.get({ companyId, idOrEmail: "l@example.com" }), "NOT_FOUND");
      expect(await h.events(companyId)).toEqual([]);
    });

    it("drops memberships with a deleted list; the contact stays", async () => {
      const companyId = await h.newCompany();
      const list = await h.lists.create({ companyId, name: "Soon gone", audit: AUDIT });
      const { contact } = await h.contacts.upsert({ companyId, email: "m@example.com", listIds: [list.id] });
      await h.lists.delete({ companyId, id: list.id, audit: AUDIT });
      expect((await h.contacts.get({ companyId, idOrEmail: contact.id })).listIds).toEqual([]);
    });
  });

  describe("contact.updated events", () => {
    it("writes one outbox row per change, in the write's transaction, none when nothing changed", async () => {
      const companyId = await h.newCompany();
      const created = await h.contacts.upsert({ companyId, email: "E@example.com", firstName: "Eve" });
      const id = created.contact.id;
      // The same write again: nothing changed, no event.
      const same = await h.contacts.upsert({ companyId, email: "E@example.com", firstName: "Eve" });
      expect(same.contact.updatedAt).toEqual(created.contact.updatedAt);
      await h.contacts.upsert({ companyId, email: "e@example.com", firstName: "Eve" }); // spelling of the address: updated
      await h.contacts.upsert({ companyId, email: "e@example.com", tags: ["a"] }); // updated
      await h.contacts.upsert({ companyId, email: "e@example.com", consent: { source: "form" } }); // consent (pending -> subscribed)
      await h.contacts.upsert({ companyId, email: "e@example.com", consent: { source: "form" } }); // the same consent again: nothing
      await h.contacts.upsert({ companyId, email: "e@example.com", status: "unsubscribed" }); // consent (status)
      await h.contacts.upsert({ companyId, email: "e@example.com", status: "subscribed", consent: { source: "form" } }); // kept: nothing

      const events = await h.events(companyId);
      expect(events.map((e) => [e.data.change, e.data.status])).toEqual([
        ["created", "pending"],
        ["updated", "pending"],
        ["updated", "pending"],
        ["consent", "subscribed"],
        ["consent", "unsubscribed"],
      ]);
      for (const event of events) {
        expect(event.event).toBe("contact.updated");
        expect(event.data).toEqual({
          contactId: id,
          email: expect.stringMatching(/^[Ee]@example\.com$/),
          status: expect.any(String),
          source: "api",
          change: expect.any(String),
          occurredAt: event.occurredAt.toISOString(),
        });
      }
    });

    it("records consent sent again with a new time or reference as a change", async () => {
      const companyId = await h.newCompany();
      await h.contacts.upsert({ companyId, email: "c@example.com", consent: { source: "form", reference: "f1" } });
      await h.contacts.upsert({ companyId, email: "c@example.com", consent: { source: "form", reference: "f2" } });
      await h.contacts.upsert({ companyId, email: "c@example.com",
        consent: { source: "form", reference: "f2", at: new Date("2029-06-01T00:00:00Z") } });
      const changes = (await h.events(companyId)).map((e) => e.data.change);
      expect(changes).toEqual(["created", "consent", "consent"]);
      expect((await h.contacts.get({ companyId, idOrEmail: "c@example.com" })).consent).toEqual({
        source: "form",
        reference: "f2",
        at: new Date("2029-06-01T00:00:00Z"),
      });
    });
  });

  describe("tenant isolation", () => {
    it("never finds, changes or reports another company's contact of the same address", async () => {
      const a = await h.newCompany("A");
      const b = await h.newCompany("B");
      const inA = await h.contacts.upsert({ companyId: a, email: "shared@example.com", firstName: "In A", consent: { source: "a" } });
      const inB = await h.contacts.upsert({ companyId: b, email: "shared@example.com", firstName: "In B", status: "unsubscribed" });
      expect(inB.created).toBe(true);
      expect(inB.contact.id).not.toBe(inA.contact.id);
      expect(await h.contacts.get({ companyId: a, idOrEmail: "shared@example.com" })).toMatchObject({ firstName: "In A", status: "subscribed" });
      await apiErrorOf(h.contacts.get({ companyId: b, idOrEmail: inA.contact.id }), "NOT_FOUND");
      expect((await h.events(a)).map((e) => e.data.contactId)).toEqual([inA.contact.id]);
      expect((await h.events(b)).map((e) => e.data.contactId)).toEqual([inB.contact.id]);
    });
  });
});
