import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresTemplateStore } from "../../../../src/adapters/postgres/sending-setup/postgres-template-store.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

describe("PostgresTemplateStore", () => {
  let h: SendingHarness;
  let store: PostgresTemplateStore;

  beforeAll(async () => {
    h = await openSendingHarness();
    store = new PostgresTemplateStore(h.orm);
  });

  afterAll(async () => {
    await h?.close();
  });

  it("creates, then replaces by name keeping the id and creation time; lists by name", async () => {
    const companyId = await h.newCompany();
    const created = await store.put(companyId, { name: "welcome", subject: "Hi", html: "<p>Hi</p>", text: null });
    expect(created).toEqual({
      id: expect.any(String),
      companyId,
      name: "welcome",
      subject: "Hi",
      html: "<p>Hi</p>",
      text: null,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replaced = await store.put(companyId, { name: "welcome", subject: "Hello", html: "<p>Hello</p>", text: "Hello" });
    expect(replaced).toMatchObject({ id: created.id, subject: "Hello", text: "Hello" });
    expect(replaced.createdAt.getTime()).toBe(created.createdAt.getTime());
    expect(replaced.updatedAt.getTime()).toBeGreaterThan(created.updatedAt.getTime());
    expect(await store.find(companyId, created.id)).toEqual(replaced);
    expect(await store.findByName(companyId, "welcome")).toEqual(replaced);

    await store.put(companyId, { name: "a-first", subject: "s", html: "h", text: null });
    expect((await store.list(companyId)).map((t) => t.name)).toEqual(["a-first", "welcome"]);
  });

  it("concurrent puts of a new name make one template", async () => {
    const companyId = await h.newCompany();
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => store.put(companyId, { name: "race", subject: `s${i}`, html: "h", text: null })));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await store.list(companyId)).toHaveLength(1);
  });

  it("tenant isolation: names are per company, and another company finds nothing; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const mine = await store.put(a, { name: "shared-name", subject: "A", html: "A", text: null });
    expect(await store.list(b)).toEqual([]);
    expect(await store.find(b, mine.id)).toBeNull();
    expect(await store.findByName(b, "shared-name")).toBeNull();
    const theirs = await store.put(b, { name: "shared-name", subject: "B", html: "B", text: null });
    expect(theirs.id).not.toBe(mine.id);
    expect((await store.findByName(a, "shared-name"))?.subject).toBe("A");

    for (const bad of ["not-a-uuid", ""]) {
      expect(await store.list(bad)).toEqual([]);
      expect(await store.find(bad, mine.id)).toBeNull();
      expect(await store.find(a, bad)).toBeNull();
      expect(await store.findByName(bad, "shared-name")).toBeNull();
    }
  });
});
