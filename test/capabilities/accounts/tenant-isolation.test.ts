import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompanyView, CreatedApiKey } from "../../../src/capabilities/accounts/index.ts";
import { expectApiError, openHarness, type Harness } from "./harness.ts";

describe("tenant isolation of API keys", () => {
  let h: Harness;
  let a: CompanyView;
  let b: CompanyView;
  let aKey: CreatedApiKey;
  let bKey: CreatedApiKey;

  beforeAll(async () => {
    h = await openHarness();
    a = await h.accounts.service.createCompany("Company A");
    b = await h.accounts.service.createCompany("Company B");
    aKey = await h.accounts.service.createApiKey(a.id, "a-key", ["mail.events.read"]);
    bKey = await h.accounts.service.createApiKey(b.id, "b-key", ["mail.events.read"]);
  });

  afterAll(async () => {
    await h?.close();
  });

  it("the service answers NOT_FOUND for another company's key, and changes nothing", async () => {
    await expectApiError(h.accounts.service.getApiKey(a.id, bKey.key.id), "NOT_FOUND");
    await expectApiError(h.accounts.service.revokeApiKey(a.id, bKey.key.id), "NOT_FOUND");
    await expectApiError(h.accounts.service.rotateApiKey(a.id, bKey.key.id), "NOT_FOUND");
    expect((await h.accounts.service.listApiKeys(a.id)).map((k) => k.id)).toEqual([aKey.key.id]);

    // B's key is untouched and still works for B.
    const [bRow] = await h.accounts.service.listApiKeys(b.id);
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
