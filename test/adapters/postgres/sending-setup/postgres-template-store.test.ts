import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresTemplateStore } from "../../../../src/adapters/postgres/sending-setup/postgres-template-store.ts";
import type { AuditNote } from "../../../../src/capabilities/audit/types.ts";
import { OPERATOR_AUDIT } from "../../../capabilities/accounts/harness.ts";
import { openSendingHarness, type SendingHarness } from "../../../capabilities/sending-setup/harness.ts";

const NOTE: AuditNote = { context: OPERATOR_AUDIT, action: "template.put", details: {} };

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
    const created = await store.put(companyId, { name: "welcome", subject: "Hi", html: "<p>Hi</p>", text: null }, NOTE);
    expect(created).toEqual({
      id: expect.any(String),
      companyId,
      name: "welcome",
      subject: "Hi",
      html: "<p>Hi</p>",
      text: null,
      version: 1,
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    const replaced = await store.put(companyId, { name: "welcome", subject: "Hello", html: "<p>Hello</p>", text: "Hello" }, NOTE);
    expect(replaced).toMatchObject({ id: created.id, subject: "Hello", text: "Hello" });
    expect(replaced.createdAt.getTime()).toBe(created.createdAt.getTime());
    expect(replaced.updatedAt.getTime()).toBeGreaterThan(created.updatedAt.getTime());
    expect(await store.find(companyId, created.id)).toEqual(replaced);
    expect(await store.findByName(companyId, "welcome")).toEqual(replaced);

    await store.put(companyId, { name: "a-first", subject: "s", html: "h", text: null }, NOTE);
    expect((await store.list(companyId)).map((t) => t.name)).toEqual(["a-first", "welcome"]);
  });

  it("concurrent puts of a new name make one template", async () => {
    const companyId = await h.newCompany();
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => store.put(companyId, { name: "race", subject: `s${i}`, html: "h", text: null }, NOTE)));
    expect(new Set(results.map((r) => r.id)).size).toBe(1);
    expect(await store.list(companyId)).toHaveLength(1);
  });

  it("tenant isolation: names are per company, and another company finds nothing; ids that cannot be row ids find nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const mine = await store.put(a, { name: "shared-name", subject: "A", html: "A", text: null }, NOTE);
    expect(await store.list(b)).toEqual([]);
    expect(await store.find(b, mine.id)).toBeNull();
    expect(await store.findByName(b, "shared-name")).toBeNull();
    const theirs = await store.put(b, { name: "shared-name", subject: "B", html: "B", text: null }, NOTE);
    expect(theirs.id).not.toBe(mine.id);
    expect((await store.findByName(a, "shared-name"))?.subject).toBe("A");

    for (const bad of ["not-a-uuid", ""]) {
      expect(await store.list(bad)).toEqual([]);
      expect(await store.find(bad, mine.id)).toBeNull();
      expect(await store.find(a, bad)).toBeNull();
      expect(await store.findByName(bad, "shared-name")).toBeNull();
    }
  });

  it("each put keeps a version (concurrent puts of one template get distinct numbers); the last 20 are kept", async () => {
    const companyId = await h.newCompany();
    const results = await Promise.all([1, 2, 3, 4, 5].map((i) => store.put(companyId, { name: "counted", subject: `s${i}`, html: "h", text: null }, NOTE)));
    expect(results.map((r) => r.version).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5]);
    const id = results[0]?.id ?? "";
    for (let n = 6; n <= 25; n += 1) await store.put(companyId, { name: "counted", subject: `s${n}`, html: "h", text: null }, NOTE);
    const versions = await store.versions(companyId, id);
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: 20 }, (_, i) => 25 - i));
    expect(versions[0]).toMatchObject({ subject: "s25", createdBy: "operator", restoredFrom: null });
    expect((await store.find(companyId, id))?.version).toBe(25);
    const rows = await h.orm.em.getConnection().execute(`select count(*)::int as n from template_version where template_id = ?`, [id]);
    expect(rows).toEqual([{ n: 20 }]);
  });

  it("restores a kept version as a new one; a pruned or unknown version, or another company's template, restores nothing", async () => {
    const a = await h.newCompany("A");
    const b = await h.newCompany("B");
    const first = await store.put(a, { name: "r", subject: "one", html: "<p>1</p>", text: "1" }, NOTE);
    await store.put(a, { name: "r", subject: "two", html: "<p>2</p>", text: null }, NOTE);
    const restored = await store.restore(a, first.id, 1, { ...NOTE, action: "template.restored" });
    expect(restored).toMatchObject({ id: first.id, name: "r", subject: "one", html: "<p>1</p>", text: "1", version: 3 });
    expect((await store.versions(a, first.id))[0]).toMatchObject({ version: 3, subject: "one", restoredFrom: 1 });
    expect(await store.restore(a, first.id, 9, NOTE)).toBeNull();
    expect(await store.restore(b, first.id, 1, NOTE)).toBeNull();
    expect(await store.versions(b, first.id)).toEqual([]);
    expect(await store.delete(b, first.id, NOTE)).toBe(false);
    expect((await store.find(a, first.id))?.version).toBe(3);
  });

  it("deletes a template with its versions", async () => {
    const companyId = await h.newCompany();
    const t = await store.put(companyId, { name: "gone", subject: "s", html: "h", text: null }, NOTE);
    expect(await store.delete(companyId, t.id, { ...NOTE, action: "template.deleted" })).toBe(true);
    expect(await store.find(companyId, t.id)).toBeNull();
    expect(await store.versions(companyId, t.id)).toEqual([]);
    expect(await store.delete(companyId, t.id, NOTE)).toBe(false);
    // The name is free again: a new template, version 1.
    expect((await store.put(companyId, { name: "gone", subject: "s", html: "h", text: null }, NOTE)).version).toBe(1);
  });
});
