import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompanyView, CreatedApiKey } from "../../../src/capabilities/accounts/index.ts";
import { asOperator, expectApiError, openHarness, type Harness } from "./harness.ts";

describe("tenant isolation of API keys", () => {
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

  it("the service answers NOT_FOUND for another company's key, and changes nothing", async () => {
    await expectApiError(h.accounts.keys.revoke(asOperator({ companyId: a.id, keyId: bKey.key.id })), "NOT_FOUND");
    await expectApiError(h.accounts.keys.rotate(asOperator({ companyId: a.id, keyId: bKey.key.id })), "NOT_FOUND");
    expect((await h.accounts.keys.list({ companyId: a.id })).items.map((k) => k.id)).toEqual([aKey.key.id]);

    // B's key is untouched and still works for B.
    const [bRow] = (await h.accounts.keys.list({ companyId: b.id })).items;
    expect(bRow).toMatchObject({ id: bKey.key.id, status: "active", revokedAt: null, replacedById: null, expiresAt: null });
    const auth = await h.accounts.authenticator.authenticate(bKey.secret);
    expect(auth.companyId).toBe(b.id);
    expect(auth.companyName).toBe("Company B");
  });

  it("a key authenticates as its own company only", async () => {
    expect((await h.accounts.authenticator.authenticate(aKey.secret)).companyId).toBe(a.id);
    expect((await h.accounts.authenticator.authenticate(bKey.secret)).companyId).toBe(b.id);
  });
});
