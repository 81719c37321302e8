import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorOf, AUDIT, fieldsNamed, openContactsHarness, type ContactsHarness } from "./harness.ts";

describe("contact lists (ListsService)", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  it("creates, lists oldest first, renames and deletes", async () => {
    const companyId = await h.newCompany();
    const a = await h.lists.create({ companyId, name: "  Newsletter ", audit: AUDIT });
    const b = await h.lists.create({ companyId, name: "Buyers", audit: AUDIT });
    expect(a.name).toBe("Newsletter");
    expect((await h.lists.list({ companyId })).map((l) => l.name)).toEqual(["Newsletter", "Buyers"]);

    const renamed = await h.lists.rename({ companyId, id: a.id, name: "Weekly newsletter", audit: AUDIT });
    expect(renamed).toMatchObject({ id: a.id, name: "Weekly newsletter", createdAt: a.createdAt });
    // Renaming to its own name in another case is allowed (only other lists' names are taken).
    expect((await h.lists.rename({ companyId, id: b.id, name: "BUYERS", audit: AUDIT })).name).toBe("BUYERS");

    await h.lists.delete({ companyId, id: a.id, audit: AUDIT });
    expect((await h.lists.list({ companyId })).map((l) => l.id)).toEqual([b.id]);
    await apiErrorOf(h.lists.delete({ companyId, id: a.id, audit: AUDIT }), "NOT_FOUND");
  });

  it("keeps names unique per company whatever their case, and names the field", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany();
    await h.lists.create({ companyId, name: "VIP", audit: AUDIT });
    const second = await h.lists.create({ companyId, name: "Other", audit: AUDIT });
    expect(await fieldsNamed(h.lists.create({ companyId, name: "vip", audit: AUDIT }))).toEqual(["name"]);
    expect(await fieldsNamed(h.lists.rename({ companyId, id: second.id, name: "Vip", audit: AUDIT }))).toEqual(["name"]);
    // Another company may use the name.
    expect((await h.lists.create({ companyId: other, name: "vip", audit: AUDIT })).name).toBe("vip");
  });

  it("validates names", async () => {
    const companyId = await h.newCompany();
    expect(await fieldsNamed(h.lists.create({ companyId, name: "   ", audit: AUDIT }))).toEqual(["name"]);
    expect(await fieldsNamed(h.lists.create({ companyId, name: "x".repeat(101), audit: AUDIT }))).toEqual(["name"]);
    expect((await h.lists.create({ companyId, name: "😀".repeat(100), audit: AUDIT })).name).toHaveLength(200);
  });

  it("never shows, renames or deletes another company's list", async () => {
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const list = await h.lists.create({ companyId: theirs, name: "Theirs", audit: AUDIT });
    expect(await h.lists.list({ companyId: mine })).toEqual([]);
    await apiErrorOf(h.lists.rename({ companyId: mine, id: list.id, name: "Mine now", audit: AUDIT }), "NOT_FOUND");
    await apiErrorOf(h.lists.delete({ companyId: mine, id: list.id, audit: AUDIT }), "NOT_FOUND");
    await apiErrorOf(h.lists.rename({ companyId: mine, id: "not-a-uuid", name: "x", audit: AUDIT }), "NOT_FOUND");
    expect((await h.lists.list({ companyId: theirs })).map((l) => l.name)).toEqual(["Theirs"]);
  });
});
