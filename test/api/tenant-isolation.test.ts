import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

describe("tenant isolation through the API", () => {
  let h: ApiHarness;
  let a: { companyId: string; keyId: string; secret: string };
  let b: { companyId: string; keyId: string; secret: string };

  beforeAll(async () => {
    h = await startApiHarness();
    a = await h.newCompanyWithKey(["mail.events.read"], "Company A");
    b = await h.newCompanyWithKey(["mail.events.read"], "Company B");
  });
  afterAll(async () => h?.close());

  it("each key sees its own company only", async () => {
    const meA = (await (await h.fetch("/mail/v1/me", bearer(a.secret))).json()) as { organization: { id: string; name: string } };
    const meB = (await (await h.fetch("/mail/v1/me", bearer(b.secret))).json()) as { organization: { id: string; name: string } };
    expect(meA.organization).toEqual({ id: a.companyId, name: "Company A" });
    expect(meB.organization).toEqual({ id: b.companyId, name: "Company B" });
  });

  it("one company's id never reaches another company's keys", async () => {
    const listA = await h.admin.listApiKeys({ companyId: a.companyId });
    expect(listA.keys.map((k) => k.id)).toEqual([a.keyId]);
    for (const call of [
      () => h.admin.revokeApiKey({ companyId: a.companyId, keyId: b.keyId }),
      () => h.admin.rotateApiKey({ companyId: a.companyId, keyId: b.keyId }),
    ]) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConnectError);
      expect((error as ConnectError).code).toBe(Code.NotFound);
    }
    // B's key still works: nothing was revoked or rotated.
    expect((await h.fetch("/mail/v1/me", bearer(b.secret))).status).toBe(200);
  });
});
