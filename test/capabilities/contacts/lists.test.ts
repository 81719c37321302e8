import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiErrorOf, fieldsNamed, openContactsHarness, type ContactsHarness } from "./harness.ts";

describe("contact lists (ListsService)", () => {
  let h: ContactsHarness;

  beforeAll(async () => {
    h = await openContactsHarness();
  });
  afterAll(async () => h?.close());

  it("creates, lists oldest first, renames and deletes", async () => {
    const companyId = await h.newCompany();
    const a = await h.lists.create(companyId, "  Newsletter ");
    const b = await h.lists.create(companyId, "Buyers");
    expect(a.name).toBe("Newsletter");
    expect((await h.lists.list(companyId)).map((l) => l.name)).toEqual(["Newsletter", "Buyers"]);

    const renamed = await h.lists.rename(companyId, a.id, "Weekly newsletter");
    expect(renamed).toMatchObject({ id: a.id, name: "Weekly newsletter", createdAt: a.createdAt });
    // Renaming to its own name in another case is allowed (only other lists' names are taken).
    expect((await h.lists.rename(companyId, b.id, "BUYERS")).name).toBe("BUYERS");

    await h.lists.delete(companyId, a.id);
    expect((await h.lists.list(companyId)).map((l) => l.id)).toEqual([b.id]);
    await apiErrorOf(h.lists.delete(companyId, a.id), "NOT_FOUND");
  });

  it("keeps names unique per company whatever their case, and names the field", async () => {
    const companyId = await h.newCompany();
    const other = await h.newCompany();
    await h.lists.create(companyId, "VIP");
    const second = await h.lists.create(companyId, "Other");
    expect(await fieldsNamed(h.lists.create(companyId, "vip"))).toEqual(["name"]);
    expect(await fieldsNamed(h.lists.rename(companyId, second.id, "Vip"))).toEqual(["name"]);
    // Another company may use the name.
    expect((await h.lists.create(other, "vip")).name).toBe("vip");
  });

  it("validates names", async () => {
    const companyId = await h.newCompany();
    expect(await fieldsNamed(h.lists.create(companyId, "   "))).toEqual(["name"]);
    expect(await fieldsNamed(h.lists.create(companyId, "x".repeat(101)))).toEqual(["name"]);
    expect((await h.lists.create(companyId, "😀".repeat(100))).name).toHaveLength(200);
  });

  it("never shows, renames or deletes another company's list", async () => {
    const mine = await h.newCompany();
    const theirs = await h.newCompany();
    const list = await h.lists.create(theirs, "Theirs");
    expect(await h.lists.list(mine)).toEqual([]);
    await apiErrorOf(h.lists.rename(mine, list.id, "Mine now"), "NOT_FOUND");
    await apiErrorOf(h.lists.delete(mine, list.id), "NOT_FOUND");
    await apiErrorOf(h.lists.rename(mine, "not-a-uuid", "x"), "NOT_FOUND");
    expect((await h.lists.list(theirs)).map((l) => l.name)).toEqual(["Theirs"]);
  });
});
