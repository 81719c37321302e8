import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeyRepository } from "../../../../src/adapters/postgres/accounts/api-key-repository.ts";
import { PostgresAccountsStore } from "../../../../src/adapters/postgres/accounts/postgres-accounts-store.ts";
import type { CompanyView, CreatedApiKey } from "../../../../src/capabilities/accounts/index.ts";
import { asOperator, OPERATOR_AUDIT, openHarness, type Harness } from "../../../capabilities/accounts/harness.ts";

describe("tenant isolation of API keys in PostgreSQL", () => {
  let h: Harness;
  let a: CompanyView;
  let b: CompanyView;
  let aKey: CreatedApiKey;
  let bKey: CreatedApiKey;

  beforeAll(async () => {
    h = await openHarness();
    a = await h.accounts.companies.create({ name: "Company A" });
    b = await h.accounts.companies.create({ name: "Company B" });
    aKey = await h.accounts.keys.create(asOperator({ companyId: a.id, name: "a-key", scopes: ["mail.events.read"] }));
    bKey = await h.accounts.keys.create(asOperator({ companyId: b.id, name: "b-key", scopes: ["mail.events.read"] }));
  });

  afterAll(async () => {
    await h?.close();
  });

  it("the repository never returns another company's keys", async () => {
    const repo = new ApiKeyRepository(h.orm.em.fork());
    expect((await repo.listForCompany(a.id, null, 100)).map((k) => k.item.id)).toEqual([aKey.key.id]);
    expect((await repo.listForCompany(b.id, null, 100)).map((k) => k.item.id)).toEqual([bKey.key.id]);
    expect(await repo.findForCompany(a.id, bKey.key.id)).toBeNull();
    expect(await repo.findForCompany(b.id, aKey.key.id)).toBeNull();
    expect((await repo.findForCompany(b.id, bKey.key.id))?.id).toBe(bKey.key.id);
    // Garbage ids find nothing instead of failing the query.
    expect(await repo.listForCompany("'; drop table api_key; --", null, 100)).toEqual([]);
    expect(await repo.findForCompany(a.id, "not-a-uuid")).toBeNull();
  });

  it("the store neither reads nor changes another company's key", async () => {
    const store = new PostgresAccountsStore(h.orm);
    const note = { context: OPERATOR_AUDIT, action: "api_key.revoked" as const, details: {} };
    expect(await store.revokeApiKey(a.id, bKey.key.id, new Date(), note)).toBeNull();
    const plan = (): never => {
      throw new Error("a rotation of another company's key must not get as far as its plan");
    };
    expect(await store.replaceApiKey(a.id, bKey.key.id, plan, { ...note, action: "api_key.rotated" })).toBeNull();
    expect((await store.listApiKeys(a.id, null, 100)).map((k) => k.item.id)).toEqual([aKey.key.id]);
    expect(await store.findCompany("not-a-uuid")).toBeNull();

    const [bRow] = (await store.listApiKeys(b.id, null, 100)).map((k) => k.item);
    expect(bRow).toMatchObject({ id: bKey.key.id, companyId: b.id, revokedAt: null, replacedById: null, expiresAt: null });
  });
});
