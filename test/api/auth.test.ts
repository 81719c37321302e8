import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { ALL_SCOPES, type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/** The spec's endpoint table: method, path, scope. */
const ROUTES: ReadonlyArray<{ method: "GET" | "POST"; path: string; scope: string | null }> = [
  { method: "POST", path: "/mail/v1/send", scope: "mail.transactional.send" },
  { method: "GET", path: "/mail/v1/messages/6f1c2b8e-2d6b-4c39-9a43-2b7d8e1f0a11", scope: "mail.events.read" },
  { method: "GET", path: "/mail/v1/messages", scope: "mail.events.read" },
  { method: "GET", path: "/mail/v1/me", scope: "mail.events.read" },
  { method: "GET", path: "/mail/v1/contacts", scope: "mail.contacts.read" },
  { method: "GET", path: "/mail/v1/contacts/someone%40example.com", scope: "mail.contacts.read" },
  { method: "POST", path: "/mail/v1/contacts", scope: "mail.contacts.write" },
  { method: "GET", path: "/mail/v1/forms", scope: "mail.events.read" },
  { method: "POST", path: "/mail/v1/conversions", scope: "mail.conversions.write" },
  { method: "GET", path: "/mail/v1/openapi.json", scope: null },
];

function call(h: ApiHarness, route: (typeof ROUTES)[number], headers: Record<string, string> = {}): Promise<Response> {
  const init: RequestInit = { method: route.method, headers: { ...headers } };
  if (route.method === "POST") {
    init.headers = { ...headers, "content-type": "application/json" };
    init.body = "{}";
  }
  return h.fetch(route.path, init);
}

async function errorCode(response: Response): Promise<string | undefined> {
  const body = (await response.json()) as { error?: { code?: string } };
  return body.error?.code;
}

describe("authentication and authorization", () => {
  let h: ApiHarness;
  let companyId: string;
  let fullKey: string;

  /** The accounts' clock runs `aheadMs` ahead of the system's: the time a key's expiry is read against. */
  let aheadMs = 0;
  /** Lets `ms` pass for key expiry (and rotation grace) while `check` runs, then brings the clock back. */
  const later = async (ms: number, check: () => Promise<void>): Promise<void> => {
    aheadMs = ms;
    try {
      await check();
    } finally {
      aheadMs = 0;
    }
  };

  beforeAll(async () => {
    h = await startApiHarness({ keyRotationGraceHours: 24 }, { accounts: { clock: () => new Date(Date.now() + aheadMs) } });
    const created = await h.newCompanyWithKey(ALL_SCOPES);
    companyId = created.companyId;
    fullKey = created.secret;
  });
  afterAll(async () => h?.close());

  it("answers 401 AUTHENTICATION_REQUIRED without a bearer token, on every authenticated route", async () => {
    for (const route of ROUTES.filter((r) => r.scope)) {
      const response = await call(h, route);
      expect(response.status, route.path).toBe(401);
      expect(await errorCode(response)).toBe("AUTHENTICATION_REQUIRED");
    }
    const basic = await h.fetch("/mail/v1/me", { headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(basic.status).toBe(401);
    expect(await errorCode(basic)).toBe("AUTHENTICATION_REQUIRED");
  });

  it("serves the OpenAPI document without authentication", async () => {
    const response = await h.fetch("/mail/v1/openapi.json");
    expect(response.status).toBe(200);
    expect(((await response.json()) as { openapi: string }).openapi).toMatch(/^3\.0\./);
  });

  it("answers 401 API_KEY_INVALID for unknown and malformed keys", async () => {
    for (const key of ["tml_" + "A".repeat(43), "not-a-key", "xyz_" + fullKey.slice(4), fullKey + "x"]) {
      const response = await h.fetch("/mail/v1/me", bearer(key));
      expect(response.status, key).toBe(401);
      expect(await errorCode(response)).toBe("API_KEY_INVALID");
    }
  });

  it("keys start with a three-letter service prefix and an underscore", () => {
    expect(fullKey).toMatch(/^[a-z]{3}_[A-Za-z0-9]{40,}$/);
  });

  it("a revoked key answers 401 API_KEY_INVALID on the very next call", async () => {
    const { keyId, secret } = await h.newKey(companyId, ["mail.events.read"]);
    expect((await h.fetch("/mail/v1/me", bearer(secret))).status).toBe(200);
    await h.forCompany(ApiKeysService, companyId).revokeApiKey({ id: keyId });
    const response = await h.fetch("/mail/v1/me", bearer(secret));
    expect(response.status).toBe(401);
    expect(await errorCode(response)).toBe("API_KEY_INVALID");
  });

  it("a rotated key works during its grace period, then answers 401 API_KEY_EXPIRED", async () => {
    const { keyId, secret } = await h.newKey(companyId, ["mail.events.read"]);
    const rotated = await h.forCompany(ApiKeysService, companyId).rotateApiKey({ id: keyId, graceHours: 1 });
    expect((await h.fetch("/mail/v1/me", bearer(secret))).status).toBe(200);
    expect((await h.fetch("/mail/v1/me", bearer(rotated.secret))).status).toBe(200);

    // An hour later the grace has ended: the key's expiry is read against the clock, nothing else changes.
    await later(3_600_000 + 1000, async () => {
      const response = await h.fetch("/mail/v1/me", bearer(secret));
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("API_KEY_EXPIRED");
      expect((await h.fetch("/mail/v1/me", bearer(rotated.secret))).status).toBe(200);
    });
  });

  it("a key past its own expiry answers 401 API_KEY_EXPIRED", async () => {
    const created = await h.forCompany(ApiKeysService, companyId).createApiKey({
      name: "short-lived",
      scopes: ["mail.events.read"],
      expiresAt: { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 },
    });
    expect((await h.fetch("/mail/v1/me", bearer(created.secret))).status).toBe(200);
    await later(3_600_000 + 1000, async () => {
      const response = await h.fetch("/mail/v1/me", bearer(created.secret));
      expect(response.status).toBe(401);
      expect(await errorCode(response)).toBe("API_KEY_EXPIRED");
    });
  });

  it("answers 403 FEATURE_NOT_ENTITLED when the company does not have the mail API", async () => {
    const other = await h.newCompanyWithKey(ALL_SCOPES, "No API Ltd");
    await h.admin.setEntitlements({ companyId: other.companyId, entitlements: { api: false, smtp: false } });
    for (const route of ROUTES.filter((r) => r.scope)) {
      const response = await call(h, route, { authorization: `Bearer ${other.secret}` });
      expect(response.status, route.path).toBe(403);
      expect(await errorCode(response)).toBe("FEATURE_NOT_ENTITLED");
    }
    await h.admin.setEntitlements({ companyId: other.companyId, entitlements: { api: true, smtp: false } });
    expect((await h.fetch("/mail/v1/me", bearer(other.secret))).status).toBe(200);
  });

  it("enforces the scope table: each route needs exactly its scope (403 FORBIDDEN otherwise)", async () => {
    const keys = new Map<string, string>();
    for (const scope of ALL_SCOPES) keys.set(scope, (await h.newKey(companyId, [scope], scope)).secret);

    for (const route of ROUTES.filter((r) => r.scope)) {
      for (const [scope, secret] of keys) {
        const response = await call(h, route, { authorization: `Bearer ${secret}` });
        if (scope === route.scope) {
          expect([401, 403], `${route.method} ${route.path} with ${scope}`).not.toContain(response.status);
        } else {
          expect(response.status, `${route.method} ${route.path} with ${scope}`).toBe(403);
          expect(await errorCode(response)).toBe("FORBIDDEN");
        }
      }
    }
  });

  it("records 'last used' in the key table without a write per request", async () => {
    const { keyId, secret } = await h.newKey(companyId, ["mail.events.read"], "usage");
    expect((await h.forCompany(ApiKeysService, companyId).listApiKeys({})).items.find((k) => k.id === keyId)?.lastUsedAt).toBeUndefined();
    await h.fetch("/mail/v1/me", bearer(secret));
    await h.app.accounts.usage.flush();
    const row = (await h.forCompany(ApiKeysService, companyId).listApiKeys({})).items.find((k) => k.id === keyId);
    expect(row?.lastUsedAt).toBeDefined();
    expect(row?.prefix).toBe(secret.slice(0, row?.prefix.length));
    expect(row?.scopes).toEqual(["mail.events.read"]);
  });
});
