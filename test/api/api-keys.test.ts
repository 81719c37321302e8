import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/wiring/api.ts";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { type ApiHarness, bearer, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { type Browser, browserHeaders, newCompany, reasonOf, signedIn } from "./members-support.ts";

type KeyJson = { id: string; name: string; prefix: string; scopes: string[]; status: string; createdBy: string; expiresAt?: string };

describe("API keys managed by the company", () => {
  let h: ApiHarness;
  let second: App;
  let companyId: string;
  let owner: Browser;

  beforeAll(async () => {
    h = await startApiHarness({ trustProxy: true });
    second = await h.startSecondInstance();
    companyId = await newCompany(h, "Keys Co");
    owner = await signedIn(h, companyId, "owner@keys.example", "owner");
  });
  afterAll(async () => h?.close());

  const me = (secret: string, app: App = h.app) => fetch(new URL("/mail/v1/me", app.httpUrl), bearer(secret));

  it("an owner creates a key (secret once), sees it in the table with who created it, and the key works", async () => {
    const created = await owner.call("mail.v1.ApiKeysService", "CreateApiKey", { name: "ci", scopes: ["mail.events.read", "mail.admin"] });
    expect(created.status).toBe(200);
    const secret = String(created.body.secret);
    expect(secret).toMatch(/^[a-z]{3}_[0-9A-Za-z]{43}$/);
    const key = created.body.key as KeyJson;
    expect(key).toMatchObject({ name: "ci", scopes: ["mail.events.read", "mail.admin"], status: "API_KEY_STATUS_ACTIVE", createdBy: "owner@keys.example" });

    const list = await owner.call("mail.v1.ApiKeysService", "ListApiKeys");
    const row = (list.body.items as KeyJson[]).find((k) => k.id === key.id);
    expect(row?.prefix).toBe(secret.slice(0, key.prefix.length));
    expect(JSON.stringify(list.body)).not.toContain(secret);
    expect((await me(secret)).status).toBe(200);
  });

  it("the same over REST with the session cookie: create answers as documented; a session's GET is refused (POST only)", async () => {
    const headers = browserHeaders(owner.origin, owner.cookie, owner.address);
    const created = await h.fetch("/mail/v1/api-keys", { method: "POST", headers, body: JSON.stringify({ name: "rest", scopes: ["mail.events.read"] }) });
    expect(created.status).toBe(201);
    const body = (await created.json()) as { key: KeyJson; secret: string };
    const { "content-type": _json, ...getHeaders } = headers;
    const list = await h.fetch("/mail/v1/api-keys", { headers: getHeaders });
    expect(list.status).toBe(403);
    expect(((await list.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    const listed = await owner.call("mail.v1.ApiKeysService", "ListApiKeys");
    expect((listed.body.items as KeyJson[]).map((k) => k.id)).toContain(body.key.id);
  });

  it("a key can only be given scopes its creator holds", async () => {
    const admin = await signedIn(h, companyId, "admin@keys.example", "admin");
    const refused = await admin.call("mail.v1.ApiKeysService", "CreateApiKey", { name: "sender", scopes: ["mail.transactional.send"] });
    expect(refused.status).toBe(403);
    expect(reasonOf(refused)).toBe("FORBIDDEN");
    expect(String(refused.body.message)).toContain("mail.transactional.send");
    // An operator acting for the company holds every scope.
    const operator = createClient(ApiKeysService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const made = await operator.createApiKey(
      { name: "sender", scopes: ["mail.transactional.send"] },
      { headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": companyId } },
    );
    expect(made.key?.createdBy).toBe("operator");
  });

  it("an API key cannot list, create, rotate or revoke keys, even with mail.admin (403 FORBIDDEN)", async () => {
    const adminKey = await h.newKey(companyId, ["mail.admin", "mail.events.read"]);
    const rest = await h.fetch("/mail/v1/api-keys", { method: "POST", ...bearer(adminKey.secret, { "content-type": "application/json" }), body: JSON.stringify({ name: "minted", scopes: ["mail.admin"] }) });
    expect(rest.status).toBe(403);
    expect(((await rest.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    const grpc = createClient(ApiKeysService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
    const headers = { authorization: `Bearer ${adminKey.secret}` };
    for (const call of [
      () => grpc.listApiKeys({}, { headers }),
      () => grpc.createApiKey({ name: "minted", scopes: ["mail.admin"] }, { headers }),
      () => grpc.rotateApiKey({ id: adminKey.keyId }, { headers }),
      () => grpc.revokeApiKey({ id: adminKey.keyId }, { headers }),
    ]) {
      expect(((await call().catch((e: unknown) => e)) as ConnectError).code).toBe(Code.PermissionDenied);
    }
    const names = (await h.forCompany(ApiKeysService, companyId).listApiKeys({})).items.map((k) => k.name);
    expect(names).not.toContain("minted");
  });

  it("rotation with grace: the old key works until the grace ends, then answers 401 API_KEY_EXPIRED", async () => {
    const old = await h.newKey(companyId, ["mail.events.read"], "rotated");
    const rotated = await owner.call("mail.v1.ApiKeysService", "RotateApiKey", { id: old.keyId, graceHours: 1 });
    expect(rotated.status).toBe(200);
    const replaced = rotated.body.replaced as KeyJson;
    const stopsAt = new Date(String(replaced.expiresAt)).getTime();
    expect(stopsAt).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(stopsAt).toBeLessThanOrEqual(Date.now() + 60 * 60_000);
    expect((await me(old.secret)).status).toBe(200);
    expect((await me(String(rotated.body.secret))).status).toBe(200);

    const now = await h.newKey(companyId, ["mail.events.read"], "rotated now");
    await me(now.secret, second); // cached in the second process
    const ended = await owner.call("mail.v1.ApiKeysService", "RotateApiKey", { id: now.keyId, graceHours: 0 });
    expect(ended.status).toBe(200);
    for (const app of [h.app, second]) {
      const answer = await me(now.secret, app);
      expect(answer.status).toBe(401);
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe("API_KEY_EXPIRED");
    }
  });

  it("a revoked key is refused on its very next call, on a second API process too", async () => {
    const key = await h.newKey(companyId, ["mail.events.read"], "revoked");
    // Both processes have the key in their lookup cache.
    expect((await me(key.secret)).status).toBe(200);
    expect((await me(key.secret, second)).status).toBe(200);
    const revoked = await owner.call("mail.v1.ApiKeysService", "RevokeApiKey", { id: key.keyId });
    expect(revoked.status).toBe(200);
    expect((revoked.body.key as KeyJson).status).toBe("API_KEY_STATUS_REVOKED");
    const onSecond = await me(key.secret, second);
    expect(onSecond.status).toBe(401);
    expect(((await onSecond.json()) as { error: { code: string } }).error.code).toBe("API_KEY_INVALID");
    expect((await me(key.secret)).status).toBe(401);
  });

  it("another company's key ids answer 404 over the session door, REST and gRPC", async () => {
    const other = await newCompany(h, "Other Keys Co");
    const foreign = await h.newKey(other, ["mail.events.read"]);
    for (const [method, body] of [
      ["RotateApiKey", { id: foreign.keyId }],
      ["RevokeApiKey", { id: foreign.keyId }],
    ] as const) {
      const answer = await owner.call("mail.v1.ApiKeysService", method, body);
      expect(answer.status, method).toBe(404);
    }
    const rest = await h.fetch(`/mail/v1/api-keys/${foreign.keyId}/revoke`, {
      method: "POST",
      headers: browserHeaders(owner.origin, owner.cookie, owner.address),
      body: "{}",
    });
    expect(rest.status).toBe(404);
    const grpc = createClient(ApiKeysService, createGrpcTransport({ baseUrl: h.app.operatorUrl }));
    const error = await grpc
      .revokeApiKey({ id: foreign.keyId }, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, "x-mail-company-id": companyId } })
      .catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.NotFound);
    // The foreign key still works.
    expect((await me(foreign.secret)).status).toBe(200);
  });

  it("pages the key table oldest first: 25 keys by default, `limit` and `nextCursor`, a cursor bound to its company", async () => {
    const paged = await newCompany(h, "Paged Keys Co");
    const made: string[] = [];
    for (let i = 0; i < 26; i++) made.push((await h.newKey(paged, ["mail.events.read"], `key ${i}`)).keyId);
    const operator = h.forCompany(ApiKeysService, paged);
    const first = await operator.listApiKeys({});
    expect(first.items.map((k) => k.id)).toEqual(made.slice(0, 25));
    const rest = await operator.listApiKeys({ cursor: first.nextCursor });
    expect(rest.items.map((k) => k.id)).toEqual(made.slice(25));
    expect(rest.nextCursor).toBeUndefined();

    // The screen's way: Connect JSON with the session cookie.
    const page = await owner.call("mail.v1.ApiKeysService", "ListApiKeys", { limit: 1 });
    expect(page.status).toBe(200);
    expect(page.body.items).toHaveLength(1);
    const cursor = String(page.body.nextCursor);
    const next = await owner.call("mail.v1.ApiKeysService", "ListApiKeys", { limit: 1, cursor });
    expect((next.body.items as KeyJson[])[0]?.id).not.toBe((page.body.items as KeyJson[])[0]?.id);
    // Another company's cursor, and a limit out of range: 400 VALIDATION_ERROR.
    const foreign = await owner.call("mail.v1.ApiKeysService", "ListApiKeys", { cursor: first.nextCursor });
    expect(foreign.status).toBe(400);
    expect(String(foreign.body.message)).toContain("cursor");
    const tooMany = await owner.call("mail.v1.ApiKeysService", "ListApiKeys", { limit: 101 });
    expect(tooMany.status).toBe(400);
    expect(String(tooMany.body.message)).toContain("limit");
  });
});
