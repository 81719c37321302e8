import crypto, { createHash } from "node:crypto";
import { SignupFormsService } from "../../src/gen/mail/v1/forms_pb.js";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import { join, relative } from "node:path";
import { Writable } from "node:stream";
import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "../../src/capabilities/accounts/api-keys.ts";
import { signatureHeader, verifySignature } from "../../src/capabilities/webhooks/signing.ts";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { webhookTargetPolicy } from "../../src/wiring/webhooks.ts";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { fieldNamesOf, outcomeOf, restProblems } from "./support/answers.ts";
import { type HostileApi, PUBLIC_HOOK_HOST, RESOLVING_NAMES, startHostileApi, type Tenant } from "./support/hostile-api.ts";

let api: HostileApi;
let tenant: Tenant;
/** Every line the service logged, at every level. */
const logLines: string[] = [];

beforeAll(async () => {
  const logs = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString("utf8"));
      done();
    },
  });
  api = await startHostileApi({}, { logger: { level: "trace", stream: logs } });
  tenant = await api.newTenant("Hooks");
});
afterAll(async () => api?.close());

// ------------------------------------------------------------------ SSRF

/**
 * The SSRF address corpus, over the API (REST create and update, gRPC
 * create): URLs that would make the service call into its own network.
 * The unit test of the policy (test/capabilities/webhooks/ssrf-policy.test.ts)
 * covers the rules; this proves every door applies them, with the
 * resolver the service really uses for DNS names (a table here: names that
 * resolve to private, loopback, link-local, mapped and mixed answers).
 */
const REFUSED_HOSTS: readonly (readonly [string, string])[] = [
  // private and shared ranges
  ["private 10/8", "https://10.0.0.1/hook"],
  ["private 172.16/12", "https://172.31.255.254/hook"],
  ["private 192.168/16", "https://192.168.1.1/hook"],
  ["carrier-grade NAT", "https://100.64.0.1/hook"],
  // loopback, by address and by name
  ["loopback", "https://127.0.0.1/hook"],
  ["loopback, other address", "https://127.1.2.3:8443/hook"],
  ["IPv6 loopback", "https://[::1]/hook"],
  ["localhost", "https://localhost/hook"],
  ["localhost with a dot", "https://localhost./hook"],
  ["LOCALHOST", "https://LOCALHOST/hook"],
  ["a name under localhost", "https://api.localhost/hook"],
  // link-local and cloud metadata
  ["metadata", "https://169.254.169.254/latest/meta-data/"],
  ["link-local", "https://169.254.0.1/hook"],
  ["IPv6 link-local", "https://[fe80::1]/hook"],
  ["IPv6 link-local with a zone", "https://[fe80::1%25eth0]/hook"],
  ["AWS IPv6 metadata", "https://[fd00:ec2::254]/hook"],
  ["unique local IPv6", "https://[fd12:3456:789a::1]/hook"],
  // IPv4 inside IPv6
  ["IPv4-mapped loopback", "https://[::ffff:127.0.0.1]/hook"],
  ["IPv4-mapped, hex", "https://[::ffff:7f00:1]/hook"],
  ["IPv4-mapped private", "https://[::ffff:10.0.0.1]/hook"],
  ["IPv4-mapped metadata, long form", "https://[0:0:0:0:0:ffff:169.254.169.254]/hook"],
  ["IPv4-compatible", "https://[::127.0.0.1]/hook"],
  ["NAT64 of a private address", "https://[64:ff9b::10.0.0.1]/hook"],
  ["6to4 of a private address", "https://[2002:c0a8:101::1]/hook"],
  // IPv4 spelled otherwise
  ["decimal", "https://2130706433/hook"],
  ["octal", "https://017700000001/hook"],
  ["hex", "https://0x7f000001/hook"],
  ["hex first part", "https://0x7f.0.0.1/hook"],
  ["octal first part", "https://0177.0.0.1/hook"],
  ["three parts", "https://127.0.1/hook"],
  ["two parts", "https://127.1/hook"],
  ["zero", "https://0/hook"],
  ["unspecified", "https://0.0.0.0/hook"],
  ["percent-encoded digits", "https://%31%32%37.0.0.1/hook"],
  ["full-width digits", "https://\uff11\uff12\uff17.\uff10.\uff10.\uff11/hook"],
  ["ideographic full stops", "https://127\u30020\u30020\u30021/hook"],
  ["broadcast", "https://255.255.255.255/hook"],
  ["multicast", "https://224.0.0.1/hook"],
  // internal names
  ["GCP metadata name", "https://metadata.google.internal/computeMetadata/v1/"],
  ["single label", "https://intranet/hook"],
  ["mDNS", "https://printer.local/hook"],
  ["home.arpa", "https://nas.home.arpa/hook"],
  ["kubernetes service", "https://api.default.svc.cluster.local/hook"],
  // DNS names whose answers are not public
  ...Object.entries(RESOLVING_NAMES)
    .filter(([name]) => name.startsWith("rebind-"))
    .map(([name, addresses]): [string, string] => [`a name resolving to ${addresses.join(", ")}`, `https://${name}/hook`]),
];

const REFUSED_URLS: readonly (readonly [string, string])[] = [
  ["plain http", `http://${PUBLIC_HOOK_HOST}/hook`],
  ["file", "file:///etc/passwd"],
  ["gopher", "gopher://127.0.0.1:25/_HELO"],
  ["javascript", "javascript:alert(1)"],
  ["data", "data:text/plain,hi"],
  ["no scheme", `${PUBLIC_HOOK_HOST}/hook`],
  ["user info before a private host", `https://${PUBLIC_HOOK_HOST}@127.0.0.1/hook`],
  ["user and password", `https://user:pass@${PUBLIC_HOOK_HOST}/hook`],
  ["empty user info", `https://@${PUBLIC_HOOK_HOST}/hook`],
  ["port in user info", `https://${PUBLIC_HOOK_HOST}:443@10.0.0.1/hook`],
  ["backslash trick", `https://127.0.0.1\\@${PUBLIC_HOOK_HOST}/hook`],
  ["an unresolvable name", "https://does-not-resolve.hostile.example/hook"],
  ["garbage", "https://[::1/hook"],
];

function isRefusal(answer: { status: number; json: unknown }): boolean {
  const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
  return answer.status === 400 && (code === "WEBHOOK_HOST_NOT_ALLOWED" || code === "VALIDATION_ERROR");
}

describe("the SSRF corpus over the API", () => {
  let existingEndpoint: string;
  beforeAll(async () => {
    const created = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: `https://${PUBLIC_HOOK_HOST}/ok`, events: ["sent"] });
    expect(created.status, created.text).toBe(201);
    existingEndpoint = (created.json as { endpoint: { id: string } }).endpoint.id;
  });

  it.each(REFUSED_HOSTS)("%s (%s): refused on create and update, WEBHOOK_HOST_NOT_ALLOWED or a 400 naming url", async (_name, url) => {
    for (const [method, path] of [
      ["POST", "/mail/v1/webhooks"],
      ["PATCH", `/mail/v1/webhooks/${existingEndpoint}`],
    ] as const) {
      const answer = await api.rest(tenant, method, path, { url, events: ["sent"] });
      expect(isRefusal(answer), `${method} ${url}: ${answer.status} ${answer.text}`).toBe(true);
      expect(restProblems(answer, fieldNamesOf(WebhooksService.method.createWebhookEndpoint.input, { door: "rest" }))).toEqual([]);
      if ((answer.json as { error: { code: string } }).error.code === "VALIDATION_ERROR") {
        expect((answer.json as { error: { message: string } }).error.message).toMatch(/^url: /);
      }
    }
  });

  it.each(REFUSED_URLS)("%s (%s): a 400 naming url (or the host refusal)", async (_name, url) => {
    const answer = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url, events: ["sent"] });
    expect(isRefusal(answer), `${url}: ${answer.status} ${answer.text}`).toBe(true);
    expect(restProblems(answer, fieldNamesOf(WebhooksService.method.createWebhookEndpoint.input, { door: "rest" }))).toEqual([]);
  });

  it("the same corpus over gRPC is INVALID_ARGUMENT with reason WEBHOOK_HOST_NOT_ALLOWED or VALIDATION_ERROR", async () => {
    const hooks = api.grpc(WebhooksService, tenant);
    for (const [name, url] of [...REFUSED_HOSTS, ...REFUSED_URLS]) {
      const outcome = await outcomeOf(() => hooks.createWebhookEndpoint({ url, events: ["sent"] }));
      expect(outcome, name).toBeInstanceOf(ConnectError);
      expect((outcome as ConnectError).code, `${name}: ${(outcome as ConnectError).rawMessage}`).toBe(Code.InvalidArgument);
    }
  });

  it("nothing was saved: the only endpoints are the public ones, unchanged", async () => {
    const list = await api.rest(tenant, "GET", "/mail/v1/webhooks");
    const urls = (list.json as { items: { url: string }[] }).items.map((e) => e.url);
    expect(urls).toEqual([`https://${PUBLIC_HOOK_HOST}/ok`]);
  });

  it("loopback receivers are never allowed in production mode: the composition root refuses the option", async () => {
    const loopback = "https://127.0.0.1/hook";
    const local = { resolve: async () => [{ address: "127.0.0.1", family: 4 as const }] };
    expect(() => webhookTargetPolicy({ mode: "production", webhookDnsTimeoutMs: 1_000 }, { resolver: local, allowLoopback: true })).toThrow(
      /loopback addresses are refused in production mode/,
    );
    expect((await webhookTargetPolicy({ mode: "production", webhookDnsTimeoutMs: 1_000 }, { resolver: local }).check(loopback)).allowed).toBe(false);
    // Outside production the option lets a receiver on the same machine through.
    expect((await webhookTargetPolicy({ mode: "development", webhookDnsTimeoutMs: 1_000 }, { allowLoopback: true }).check(loopback)).allowed).toBe(true);
  });

  it("the check can pass: a public https URL is saved (201)", async () => {
    const answer = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: `https://${PUBLIC_HOOK_HOST}:8443/other?x=1`, events: ["delivered"] });
    expect(answer.status, answer.text).toBe(201);
    await api.rest(tenant, "DELETE", `/mail/v1/webhooks/${(answer.json as { endpoint: { id: string } }).endpoint.id}`);
  });
});

// ------------------------------------------------------------------ secret comparisons

/**
 * Secrets are compared in constant time: API keys (HMAC-SHA256 under the
 * pepper, found by hash, then compared with crypto.timingSafeEqual), the
 * operator token (SHA-256 of both sides, then timingSafeEqual: lengths do
 * not leak), webhook signatures (every `v1` candidate compared, match or
 * not), cursor MACs and the hosted form's tokens. Proven two ways, with no
 * timing measured: every such decision is seen going through
 * crypto.timingSafeEqual with the expected operands, and no source file
 * compares a secret with `===`.
 */
interface Comparison {
  readonly a: Buffer;
  readonly b: Buffer;
}

const comparisons: Comparison[] = [];
const original = crypto.timingSafeEqual;

function watchComparisons(): void {
  crypto.timingSafeEqual = ((a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    comparisons.push({ a: Buffer.from(a.buffer, a.byteOffset, a.byteLength), b: Buffer.from(b.buffer, b.byteOffset, b.byteLength) });
    return original(a, b);
  }) as typeof crypto.timingSafeEqual;
  // Named imports of node:crypto (`import { timingSafeEqual }`) see the replacement too.
  syncBuiltinESMExports();
}

function sha256(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}

function compared(x: Buffer, y: Buffer): boolean {
  return comparisons.some((c) => (c.a.equals(x) && c.b.equals(y)) || (c.a.equals(y) && c.b.equals(x)));
}

describe("secret comparisons", () => {
  beforeAll(watchComparisons);
  afterEach(() => {
    comparisons.length = 0;
  });
  afterAll(() => {
    crypto.timingSafeEqual = original;
    syncBuiltinESMExports();
  });

  it("an API key is checked by its HMAC, through timingSafeEqual", async () => {
    const { secret } = await api.h.newCompanyWithKey(["mail.events.read"], "Timing");
    comparisons.length = 0;
    const answer = await api.h.fetch("/mail/v1/me", { headers: { authorization: `Bearer ${secret}` } });
    expect(answer.status).toBe(200);
    const hash = hashApiKey(api.h.app.config.apiKeyPepper, secret);
    expect(compared(hash, hash), "the key's HMAC compared with the stored one").toBe(true);
    // The raw key is never an operand: it is hashed first.
    expect(comparisons.some((c) => c.a.includes(Buffer.from(secret)) || c.b.includes(Buffer.from(secret)))).toBe(false);
  });

  it("the operator token is compared as SHA-256 digests, whatever the length presented", async () => {
    const withToken = (token: string): Interceptor => (next) => (req) => {
      req.header.set("authorization", `Bearer ${token}`);
      return next(req);
    };
    const adminWith = (token: string) => createClient(AdminService, createConnectTransport({ baseUrl: api.h.app.operatorUrl, httpVersion: "1.1", interceptors: [withToken(token)] }));

    await adminWith(OPERATOR_TOKEN).listCompanies({});
    expect(compared(sha256(OPERATOR_TOKEN), sha256(OPERATOR_TOKEN))).toBe(true);

    comparisons.length = 0;
    const wrong = "x";
    const refused = await outcomeOf(() => adminWith(wrong).listCompanies({}));
    expect((refused as ConnectError).code).toBe(Code.PermissionDenied);
    expect(compared(sha256(wrong), sha256(OPERATOR_TOKEN)), "a one-character token is compared as a 32-byte digest").toBe(true);
  });

  it("a webhook signature check compares every v1 candidate in constant time, matching or not", () => {
    const body = '{"id":"d","event":"sent"}';
    const now = Math.floor(Date.now() / 1000);
    const header = signatureHeader(body, ["whsec_new", "whsec_old"], now);
    comparisons.length = 0;
    expect(verifySignature(body, `${header},v1=not-hex`, "whsec_old", now).ok).toBe(true);
    // Three candidates (two signatures and a malformed one), three comparisons of 32 bytes.
    expect(comparisons).toHaveLength(3);
    expect(comparisons.every((c) => c.a.length === 32 && c.b.length === 32)).toBe(true);
    comparisons.length = 0;
    expect(verifySignature(body, header, "whsec_other", now)).toEqual({ ok: false, reason: "no_match" });
    expect(comparisons).toHaveLength(2);
  });

  it("a cursor's MAC is compared in constant time", async () => {
    const answer = await api.rest(tenant, "GET", `/mail/v1/messages?cursor=${"A".repeat(120)}`);
    expect(answer.status).toBe(400);
    expect(comparisons.some((c) => c.a.length === 32 && c.b.length === 32)).toBe(true);
  });

  it("the hosted form's token is compared in constant time", async () => {
    const { companyId } = await api.h.newCompanyWithKey(["mail.events.read"], "Forms");
    const { form } = await api.h.forCompany(SignupFormsService, companyId).createForm({ name: "News", fields: [{ name: "email", label: "Email", type: "email", required: true }], consentText: "Yes", language: "en" });
    comparisons.length = 0;
    const forged = `${Date.now()}.${"A".repeat(43)}`;
    const answer = await api.h.fetch(`/mail/v1/forms/${form?.publicId}`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ email: "visitor@customers.example", _token: forged, consent: "yes" }).toString(),
    });
    expect(answer.status).toBeLessThan(500);
    expect(comparisons.some((c) => c.a.equals(Buffer.from("A".repeat(43))) || c.b.equals(Buffer.from("A".repeat(43))))).toBe(true);
  });

  it("no source file compares a secret, token, signature, MAC or hash with === or !==", () => {
    const root = join(import.meta.dirname, "../../src");
    const files: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (name !== "gen") walk(path);
        } else if (name.endsWith(".ts")) files.push(path);
      }
    };
    walk(root);
    // `a === b` where an operand is named like a secret and the other is not a literal.
    const COMPARISON = /([\w$.]+)\s*(?:===|!==)\s*([\w$.]+|"[^"]*"|'[^']*')/g;
    const SECRETISH = /(?:secret|token|signature|mac|hash|pepper|password|csrf)\w*$/i;
    const LITERAL = /^(?:null|undefined|true|false|\d+|"[^"]*"|'[^']*')$/;
    const secretish = (operand: string) => SECRETISH.test(operand.split(".").pop() ?? "") && !/\.length$/.test(operand);
    const offending: string[] = [];
    for (const file of files) {
      readFileSync(file, "utf8")
        .split("\n")
        .forEach((line, i) => {
          if (/^\s*(?:\/\/|\*)/.test(line)) return;
          for (const [, left = "", right = ""] of line.matchAll(COMPARISON)) {
            if ((secretish(left) && !LITERAL.test(right)) || (secretish(right) && !LITERAL.test(left))) {
              offending.push(`${relative(root, file)}:${i + 1}: ${line.trim()}`);
            }
          }
        });
    }
    // The check can fail: it finds a plain comparison of a secret.
    expect("if (presentedToken === expectedToken) {".match(COMPARISON)?.length).toBe(1);
    expect(offending).toEqual([]);
  });
});

// ------------------------------------------------------------------ secrets never kept (issue 18, item 3)

/**
 * A secret is in the answer that creates it and nowhere else: not in the
 * idempotency store (whose records are kept 24 hours for replays), not in
 * any other table, not in any log line. After each secret-bearing call,
 * every table of the service's database is searched for the secret, as
 * text and as the hex of its bytes (protobuf answers are stored as bytea).
 * A replay of a secret-bearing answer returns the record without the
 * secret and says so (`Idempotent-Redacted: secret`).
 */
describe("secrets are never kept for idempotent replays nor logged", () => {
  // Endpoints on public address literals, each its own host (at most 3 endpoints per host).
  let single: Tenant;
  beforeAll(async () => {
    // One key: idempotency records are kept per API key.
    single = await api.newTenant("Secrets", 1);
  });

  async function tablesHolding(secret: string): Promise<string[]> {
    const { rows: tables } = await api.h.db.query<{ name: string }>(
      `select quote_ident(table_schema) || '.' || quote_ident(table_name) as name
         from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.name)).toContain("public.idempotency_record");
    const holding: string[] = [];
    const hex = Buffer.from(secret, "utf8").toString("hex");
    for (const { name } of tables) {
      const { rows } = await api.h.db.query<{ n: number }>(
        `select count(*)::int as n from ${name} t where strpos(t::text, $1) > 0 or strpos(lower(t::text), $2) > 0`,
        [secret, hex],
      );
      if ((rows[0]?.n ?? 0) > 0) holding.push(name);
    }
    return holding;
  }

  function loggedAnywhere(secret: string): boolean {
    return logLines.some((line) => line.includes(secret));
  }

  it("the search can fail: it finds a value the database holds, in text and in bytea", async () => {
    const created = await api.rest(single, "POST", "/mail/v1/webhooks", { url: `https://93.184.216.1/probe`, events: ["sent"] });
    const url = (created.json as { endpoint: { url: string } }).endpoint.url;
    expect(await tablesHolding(url)).toContain("public.webhook_endpoint");
    // An idempotent answer's bytes are found too (the endpoint id is in the stored protobuf).
    const keyed = await api.rest(single, "POST", "/mail/v1/webhooks", { url: `https://93.184.216.2/probe2`, events: ["sent"] }, { "idempotency-key": "probe-2" });
    const id = (keyed.json as { endpoint: { id: string } }).endpoint.id;
    expect(await tablesHolding(id)).toEqual(expect.arrayContaining(["public.webhook_endpoint", "public.idempotency_record"]));
  });

  it("CreateWebhookEndpoint with an Idempotency-Key: the secret is answered once, stored nowhere, and a replay says it was left out", async () => {
    const body = { url: `https://93.184.216.3/idem-create`, events: ["delivered"] };
    const first = await api.rest(single, "POST", "/mail/v1/webhooks", body, { "idempotency-key": "create-1" });
    expect(first.status, first.text).toBe(201);
    const created = first.json as { endpoint: { id: string }; secret: string };
    expect(created.secret).toMatch(/^whsec_/);
    expect(first.headers.get("idempotent-redacted")).toBeNull();
    expect(await tablesHolding(created.secret)).toEqual([]);
    expect(loggedAnywhere(created.secret)).toBe(false);

    const replay = await api.rest(single, "POST", "/mail/v1/webhooks", body, { "idempotency-key": "create-1" });
    expect(replay.status, replay.text).toBe(201);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("idempotent-redacted")).toBe("secret");
    const replayed = replay.json as { endpoint: { id: string }; secret?: string };
    expect(replayed.endpoint.id).toBe(created.endpoint.id);
    expect(replayed.secret ?? "").toBe("");
    expect(replay.text).not.toContain(created.secret);
  });

  it("RotateWebhookSecret with an Idempotency-Key: neither secret is kept; a replay after a second rotation returns no stale secret", async () => {
    const endpoint = (await api.rest(single, "POST", "/mail/v1/webhooks", { url: `https://93.184.216.4/idem-rotate`, events: ["sent"] })).json as {
      endpoint: { id: string };
      secret: string;
    };
    const path = `/mail/v1/webhooks/${endpoint.endpoint.id}/rotate-secret`;
    const first = await api.rest(single, "POST", path, {}, { "idempotency-key": "rotate-1" });
    expect(first.status, first.text).toBe(200);
    const rotated = (first.json as { secret: string }).secret;
    expect(rotated).toMatch(/^whsec_/);
    const second = await api.rest(single, "POST", path, {}, { "idempotency-key": "rotate-2" });
    const newest = (second.json as { secret: string }).secret;
    expect(newest).toMatch(/^whsec_/);
    for (const secret of [endpoint.secret, rotated, newest]) {
      expect(await tablesHolding(secret)).toEqual([]);
      expect(loggedAnywhere(secret)).toBe(false);
    }

    const replay = await api.rest(single, "POST", path, {}, { "idempotency-key": "rotate-1" });
    expect(replay.status, replay.text).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.headers.get("idempotent-redacted")).toBe("secret");
    expect(replay.text).not.toContain("whsec_");
  });

  it("the same over gRPC: the replay's secret is empty and its metadata names the redacted field", async () => {
    const hooks = api.grpc(WebhooksService, single);
    const request = { url: `https://93.184.216.5/idem-grpc`, events: ["bounced"] };
    const headers = { "idempotency-key": "grpc-create-1" };
    const first = await hooks.createWebhookEndpoint(request, { headers });
    expect(first.secret).toMatch(/^whsec_/);
    let replayHeaders: Headers | undefined;
    const replay = await hooks.createWebhookEndpoint(request, { headers, onHeader: (h) => (replayHeaders = h) });
    expect(replay.endpoint?.id).toBe(first.endpoint?.id);
    expect(replay.secret).toBe("");
    expect(replayHeaders?.get("idempotent-replayed")).toBe("true");
    expect(replayHeaders?.get("idempotent-redacted")).toBe("secret");
    expect(await tablesHolding(first.secret)).toEqual([]);
    expect(loggedAnywhere(first.secret)).toBe(false);
  });

  it("API keys' secrets are kept nowhere either: the key the tenant uses is not in any table or log", async () => {
    const [secret] = single.keys;
    expect(secret).toBeDefined();
    expect(await tablesHolding(secret as string)).toEqual([]);
    expect(loggedAnywhere(secret as string)).toBe(false);
  });
});

// ------------------------------------------------------------------ refusals that do not leak (issue 18, item 6)

describe("a refused host is refused without detail; the detail is in the server log under the request id", () => {
  it.each([
    ["a name resolving to a private address", "https://rebind-private.hostile.example/hook", "10.0.0.7"],
    ["a name resolving to the metadata address", "https://rebind-metadata.hostile.example/hook", "169.254.169.254"],
    ["a private literal", "https://10.1.2.3/hook", "10.1.2.3"],
    ["a name that does not resolve", "https://does-not-resolve.hostile.example/hook", "ENOTFOUND"],
  ])("%s: 400 WEBHOOK_HOST_NOT_ALLOWED saying only that", async (_name, url, inside) => {
    const requestId = `leak-check-${Math.random().toString(36).slice(2)}`;
    const answer = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url, events: ["sent"] }, { "x-request-id": requestId });
    expect(answer.status, answer.text).toBe(400);
    expect(answer.json).toEqual({ error: { code: "WEBHOOK_HOST_NOT_ALLOWED", message: "The endpoint host is not allowed. Use a public https:// address." } });
    expect(answer.text).not.toContain(inside);
    const logged = logLines.filter((line) => line.includes(requestId) && line.includes("webhook endpoint host refused"));
    expect(logged, `no log line for ${requestId}`).toHaveLength(1);
    expect(logged[0]).toContain(inside);
  });
});
