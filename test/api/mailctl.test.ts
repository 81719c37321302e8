import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";

describe("mailctl, the operators' command line", () => {
  let h: ApiHarness;

  beforeAll(async () => {
    h = await startApiHarness();
  });
  afterAll(async () => h?.close());

  const { mailctl } = mailctlAgainst(() => h.app.operatorUrl);

  it("creates a company and a key, lists the key table and revokes, all as JSON", async () => {
    const company = JSON.parse((await mailctl(["company", "create", "--name", "CLI Co"])).stdout) as { company: { id: string; entitlements: { api: boolean } } };
    expect(company.company.entitlements.api).toBe(true);
    const companyId = company.company.id;

    const created = JSON.parse(
      (await mailctl(["key", "create", "--company", companyId, "--name", "backend", "--scope", "mail.events.read"])).stdout,
    ) as { key: { id: string; prefix: string }; secret: string };
    expect(created.secret.startsWith(created.key.prefix)).toBe(true);
    expect((await h.fetch("/mail/v1/me", bearer(created.secret))).status).toBe(200);

    const list = JSON.parse((await mailctl(["key", "list", "--company", companyId])).stdout) as {
      keys: Array<{ name: string; prefix: string; scopes: string[]; lastUsedAt: string | null }>;
    };
    expect(list.keys).toEqual([expect.objectContaining({ name: "backend", prefix: created.key.prefix, scopes: ["mail.events.read"] })]);
    expect(JSON.stringify(list)).not.toContain(created.secret);

    await mailctl(["key", "revoke", "--company", companyId, "--key", created.key.id]);
    expect((await h.fetch("/mail/v1/me", bearer(created.secret))).status).toBe(401);
  });

  it("key list prints the whole key table, more than a page of it, oldest first", async () => {
    const { companyId } = await h.newCompanyWithKey(["mail.events.read"], "Many Keys CLI Co");
    for (let i = 1; i <= 120; i++) await h.newKey(companyId, ["mail.events.read"], `key ${i}`);
    const list = JSON.parse((await mailctl(["key", "list", "--company", companyId])).stdout) as { keys: Array<{ name: string }> };
    expect(list.keys.map((k) => k.name)).toEqual(["test key", ...Array.from({ length: 120 }, (_, i) => `key ${i + 1}`)]);
  });

  it("reports errors as JSON with the contract's code and a non-zero exit", async () => {
    const wrongToken = await mailctl(["company", "list"], "not-the-token");
    expect(wrongToken.code).toBe(1);
    expect(JSON.parse(wrongToken.stderr)).toEqual({ error: { code: "FORBIDDEN", message: expect.any(String) } });

    const unknown = await mailctl(["key", "list", "--company", "00000000-0000-4000-8000-000000000000"]);
    expect(unknown.code).toBe(1);
    expect((JSON.parse(unknown.stderr) as { error: { code: string } }).error.code).toBe("NOT_FOUND");

    const usage = await mailctl(["key", "create"]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("usage: mailctl");
  });
});
