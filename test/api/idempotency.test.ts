import { randomUUID } from "node:crypto";
import { create, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { type Client, createClient, createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiError, apiErrorFrom, ValidationError } from "../../src/contract/api-error.ts";
import { messageFromPublicJson } from "../../src/contract/json-codec.ts";
import { type Accounts, createAccounts } from "../../src/wiring/accounts.ts";
import {
  type IdempotencyScope,
  type IdempotencyStore,
  IdempotencyGuard,
  LEASE_MARGIN_SECONDS,
} from "../../src/capabilities/idempotency/index.ts";
import { messageFingerprint } from "../../src/transport/connect/request-fingerprint.ts";
import { PostgresIdempotencyStore } from "../../src/adapters/postgres/idempotency/postgres-idempotency-store.ts";
import { poolOf } from "../../src/adapters/postgres/sql.ts";
import { createIdempotency } from "../../src/wiring/idempotency.ts";
import { asOperator } from "../capabilities/accounts/harness.ts";
import type { FixedWindowRateLimiter } from "../../src/capabilities/rate-limit/index.ts";
import { createRateLimiter } from "../../src/wiring/rate-limit.ts";
import {
  ConversionEventType,
  ConversionOutcome,
  MailService,
  MessageStatus,
  RecordConversionRequestSchema,
  RecordConversionResponseSchema,
  SendMessageRequestSchema,
  SendMessageResponseSchema,
} from "../../src/gen/mail/v1/mail_pb.js";
import { migrate, openOrm, type MikroORM } from "../../src/adapters/postgres/orm.ts";
import { authInterceptor } from "../../src/transport/connect/auth-interceptor.ts";
import { errorsInterceptor } from "../../src/transport/connect/errors-interceptor.ts";
import { withIdempotency } from "../../src/transport/connect/idempotency-interceptor.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";

type Mail = Client<typeof MailService>;

/** What one call answered: the message id, or the contract error; and whether it was a replay. */
interface Answer {
  readonly id?: string;
  readonly error?: ApiError;
  readonly replayed: boolean;
}

const SEND_SCOPES = ["mail.transactional.send", "mail.conversions.write"];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The mechanism as wired in src/transport/server.ts (the real interceptor
 * chain, the wrapper, PostgreSQL), in process, around a POST operation
 * (RecordConversion) whose behaviour the test controls through its eventId.
 * SendMessage is not wrapped: its key names the message (last test here,
 * and the real-server tests below).
 */
describe("Idempotency-Key on a POST operation (in-process router, real PostgreSQL)", () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let accounts: Accounts;
  let rateLimiter: FixedWindowRateLimiter;
  let guard: IdempotencyGuard;
  let impatientGuard: IdempotencyGuard;
  let client: Mail;
  let impatientClient: Mail;
  let secret: string;
  let secretOfOtherKey: string;
  let keyId: string;

  /** Handler runs per subject, so each test counts its own. */
  const runs = new Map<string, number>();
  const failOnce = new Set<string>();
  let releaseBlocked: () => void = () => undefined;
  let blocked = new Promise<void>((resolve) => (releaseBlocked = resolve));

  const fakeMail = {
    async recordConversion(request: { eventId: string }) {
      const subject = request.eventId;
      runs.set(subject, (runs.get(subject) ?? 0) + 1);
      if (subject.startsWith("slow")) await sleep(300);
      if (subject.startsWith("blocked")) await blocked;
      if (subject.startsWith("invalid")) throw new ValidationError([{ field: "to", problem: "is not an email address" }]);
      if (subject.startsWith("boom") && !failOnce.has(subject)) {
        failOnce.add(subject);
        throw new Error("the database went away");
      }
      return create(RecordConversionResponseSchema, {
        conversion: { id: randomUUID(), eventId: subject, eventType: ConversionEventType.PURCHASE },
        outcome: ConversionOutcome.RECORDED,
      });
    },
    /** Counts its runs like the other; the wrapper must leave it alone. */
    async sendMessage(request: { subject?: string }) {
      const subject = request.subject ?? "";
      runs.set(subject, (runs.get(subject) ?? 0) + 1);
      return create(SendMessageResponseSchema, { id: randomUUID(), status: MessageStatus.QUEUED });
    },
  };

  function clientWith(g: IdempotencyGuard): Mail {
    const transport = createRouterTransport((router) => router.service(MailService, withIdempotency(MailService, fakeMail, g)), {
      router: {
        interceptors: [
          errorsInterceptor({ error: () => undefined }),
          authInterceptor({
            authenticator: accounts.authenticator,
            rateLimiter,
            defaultRequestsPerMinute: 10_000,
            operatorToken: undefined,
          }),
        ],
      },
    });
    return createClient(MailService, transport);
  }

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 8 });
    await migrate(orm);
    accounts = createAccounts(orm, { apiKeyPepper: "test-pepper", apiKeyPrefix: "tml", keyRotationGraceHours: 24, keyUsageFlushMs: 3_600_000, cursorSecret: "test-cursor-secret" });
    rateLimiter = createRateLimiter(orm);
    guard = createIdempotency(orm, { idempotencyWindowHours: 24 }, { cleanupEveryMs: 0 });
    impatientGuard = createIdempotency(orm, { idempotencyWindowHours: 24 }, { cleanupEveryMs: 0, waitMs: 300 });
    client = clientWith(guard);
    impatientClient = clientWith(impatientGuard);

    const company = await accounts.companies.create({ name: "Acme" });
    const key = await accounts.keys.create(asOperator({ companyId: company.id, name: "server", scopes: SEND_SCOPES }));
    ({ secret } = key);
    keyId = key.key.id;
    secretOfOtherKey = (await accounts.keys.create(asOperator({ companyId: company.id, name: "other server", scopes: SEND_SCOPES }))).secret;
  });

  afterAll(async () => {
    releaseBlocked();
    await guard?.close();
    await impatientGuard?.close();
    await rateLimiter?.close();
    await accounts?.usage.close();
    await orm?.close();
    await db?.drop();
  });

  async function send(body: JsonObject, key: string | undefined, options: { secret?: string; via?: Mail } = {}): Promise<Answer> {
    let header: Headers | undefined;
    const headers: Record<string, string> = { authorization: `Bearer ${options.secret ?? secret}` };
    if (key !== undefined) headers["idempotency-key"] = key;
    try {
      const response = await (options.via ?? client).recordConversion(messageFromPublicJson(RecordConversionRequestSchema, body), {
        headers,
        onHeader: (h) => {
          header = h;
        },
      });
      return { id: response.conversion?.id, replayed: header?.get("idempotent-replayed") === "true" };
    } catch (error) {
      const apiError = apiErrorFrom(error);
      if (!apiError) throw error;
      return { error: apiError, replayed: apiError.headers["idempotent-replayed"] === "true" };
    }
  }

  /** A conversion whose eventId says what the fake handler does. */
  function body(subject: string, extra: JsonObject = {}): JsonObject {
    return { eventId: subject, eventType: "purchase", email: "ada@example.com", ...extra };
  }

  it("same key and body: the first answer again, flagged as a replay; the handler ran once", async () => {
    const key = randomUUID();
    const first = await send(body("same"), key);
    const second = await send(body("same"), key);
    expect(first).toEqual({ id: expect.any(String), replayed: false });
    expect(second).toEqual({ id: first.id, replayed: true });
    expect(runs.get("same")).toBe(1);
  });

  it("without the header nothing changes: every call runs", async () => {
    const first = await send(body("no key"), undefined);
    const second = await send(body("no key"), undefined);
    expect(first.id).not.toBe(second.id);
    expect(second.replayed).toBe(false);
    expect(runs.get("no key")).toBe(2);
  });

  it("the same body with keys and map entries in another order is the same request", async () => {
    const key = randomUUID();
    const first = await send({ eventId: "reordered", eventType: "purchase", email: "ada@example.com", metadata: { a: "1", b: { x: 1, y: 2 } } }, key);
    const second = await send({ metadata: { b: { y: 2, x: 1 }, a: "1" }, email: "ada@example.com", eventType: "purchase", eventId: "reordered" }, key);
    expect(second).toEqual({ id: first.id, replayed: true });
    expect(runs.get("reordered")).toBe(1);
  });

  it("same key with another body: 409 IDEMPOTENCY_CONFLICT, the handler does not run", async () => {
    const key = randomUUID();
    await send(body("conflict"), key);
    const other = await send(body("conflict", { email: "grace@example.com" }), key);
    expect(other.error?.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(other.error?.message).toMatch(/different body/);
    expect(runs.get("conflict")).toBe(1);
  });

  it("10 concurrent identical requests: the handler runs once and all get the same id", async () => {
    const key = randomUUID();
    const answers = await Promise.all(Array.from({ length: 10 }, () => send(body("slow concurrent"), key)));
    expect(runs.get("slow concurrent")).toBe(1);
    expect(new Set(answers.map((a) => a.id)).size).toBe(1);
    expect(answers[0]?.id).toEqual(expect.any(String));
    expect(answers.filter((a) => a.replayed)).toHaveLength(9);
  });

  it("a 400 answer is kept and replayed as the same 400", async () => {
    const key = randomUUID();
    const first = await send(body("invalid"), key);
    const second = await send(body("invalid"), key);
    expect(first.error?.code).toBe("VALIDATION_ERROR");
    expect(first.replayed).toBe(false);
    expect(second.error?.code).toBe("VALIDATION_ERROR");
    expect(second.error?.message).toBe(first.error?.message);
    expect(second.replayed).toBe(true);
    expect(runs.get("invalid")).toBe(1);
  });

  it("an unexpected error is not kept: the retry with the same key runs again", async () => {
    const key = randomUUID();
    const first = await send(body("boom"), key);
    expect(first.error?.code).toBe("INTERNAL_ERROR");
    const rows = await db.query(`select 1 from idempotency_record where idempotency_key = $1`, [key]);
    expect(rows.rowCount).toBe(0);
    const retry = await send(body("boom"), key);
    expect(retry).toEqual({ id: expect.any(String), replayed: false });
    expect(runs.get("boom")).toBe(2);
  });

  it("another API key with the same idempotency key is an independent request (records are per API key)", async () => {
    const key = randomUUID();
    const mine = await send(body("per key"), key);
    const theirs = await send(body("per key"), key, { secret: secretOfOtherKey });
    expect(theirs).toEqual({ id: expect.any(String), replayed: false });
    expect(theirs.id).not.toBe(mine.id);
    expect(runs.get("per key")).toBe(2);
  });

  it("an expired record is forgotten: the request runs again, even with another body", async () => {
    const key = randomUUID();
    const first = await send(body("expiring"), key);
    await db.query(`update idempotency_record set expires_at = now() - interval '1 second' where idempotency_key = $1`, [key]);
    const again = await send(body("expiring"), key);
    expect(again).toEqual({ id: expect.any(String), replayed: false });
    expect(again.id).not.toBe(first.id);
    expect(runs.get("expiring")).toBe(2);
    // ... and its answer is the one kept from now on.
    expect(await send(body("expiring"), key)).toEqual({ id: again.id, replayed: true });
  });

  it("the record is kept for config.idempotencyWindowHours, under the caller's key id", async () => {
    const key = randomUUID();
    await send(body("window"), key);
    const { rows } = await db.query<{ api_key_id: string; rpc: string; state: string; hours: number }>(
      `select api_key_id, rpc, state, round(extract(epoch from (expires_at - created_at)) / 3600) as hours
         from idempotency_record where idempotency_key = $1`,
      [key],
    );
    expect(rows).toEqual([{ api_key_id: keyId, rpc: "mail.v1.MailService/RecordConversion", state: "completed", hours: "24" }]);
  });

  it("a request still in progress after the wait: IDEMPOTENCY_CONFLICT saying so", async () => {
    const key = randomUUID();
    const first = send(body("blocked"), key, { via: impatientClient });
    await sleep(100);
    const second = await send(body("blocked"), key, { via: impatientClient });
    expect(second.error?.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(second.error?.message).toMatch(/still in progress/);
    // Seconds until the first request's lease ends (40 s by default).
    expect(Number(second.error?.headers["retry-after"])).toBeGreaterThan(30);
    releaseBlocked();
    const done = await first;
    expect(done.replayed).toBe(false);
    expect(await send(body("blocked"), key, { via: impatientClient })).toEqual({ id: done.id, replayed: true });
    expect(runs.get("blocked")).toBe(1);
    blocked = new Promise<void>((resolve) => (releaseBlocked = resolve));
  });

  it("SendMessage is left to its own rule: the wrapper keeps no record for it and never answers in its place", async () => {
    const key = randomUUID();
    const request = fromJson(SendMessageRequestSchema, { to: "ada@example.com", subject: "send owns its key", html: "<p>Hi</p>" });
    const headers = { authorization: `Bearer ${secret}`, "idempotency-key": key };
    expect((await client.sendMessage(request, { headers })).replayed).toBe(false);
    expect((await client.sendMessage(request, { headers })).replayed).toBe(false);
    expect(runs.get("send owns its key")).toBe(2);
    expect((await db.query(`select 1 from idempotency_record where idempotency_key = $1`, [key])).rowCount).toBe(0);
  });

  it("a claim its request could not drop (the database went away) holds the key until its lease ends: a 409 with retry-after, then the retry runs", async () => {
    const LEASE = 2;
    const postgres = new PostgresIdempotencyStore(poolOf(orm), { windowHours: 24, cleanupEveryMs: 0 });
    // The store as the database outage left it: the claim was taken, dropping it failed.
    const outage: IdempotencyStore = {
      claim: (scope: IdempotencyScope, lease: number) => postgres.claim(scope, lease),
      inspect: (scope: IdempotencyScope) => postgres.inspect(scope),
      complete: (...args) => postgres.complete(...args),
      release: () => Promise.reject(new Error("Connection terminated unexpectedly")),
      close: () => postgres.close(),
    };
    const storeErrors: unknown[] = [];
    const leased = new IdempotencyGuard(outage, { leaseSeconds: LEASE, waitMs: 200, onStoreError: (error) => storeErrors.push(error) });
    try {
      const via = clientWith(leased);
      const key = randomUUID();
      const failed = await send(body("boom lease"), key, { via });
      expect(failed.error?.code).toBe("INTERNAL_ERROR");
      expect(storeErrors).toHaveLength(1);

      const locked = await send(body("boom lease"), key, { via });
      expect(locked.error?.code).toBe("IDEMPOTENCY_CONFLICT");
      expect(locked.error?.message).toMatch(/still in progress/);
      const retryAfter = Number(locked.error?.headers["retry-after"]);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(LEASE);

      await sleep(retryAfter * 1000);
      expect(await send(body("boom lease"), key, { via })).toEqual({ id: expect.any(String), replayed: false });
      expect(runs.get("boom lease")).toBe(2);
    } finally {
      await leased.close();
    }
  });

  it("a caller's own deadline shortens the lease of its claim to that deadline plus the margin", async () => {
    const key = randomUUID();
    const headers = { authorization: `Bearer ${secret}`, "idempotency-key": key };
    const call = client.recordConversion(messageFromPublicJson(RecordConversionRequestSchema, body("blocked deadline")), { headers, timeoutMs: 3_000 });
    let seconds: number | undefined;
    while (seconds === undefined) {
      const { rows } = await db.query<{ seconds: number }>(
        `select extract(epoch from expires_at - now())::float8 as seconds from idempotency_record where idempotency_key = $1`,
        [key],
      );
      seconds = rows[0]?.seconds;
      if (seconds === undefined) await sleep(20);
    }
    releaseBlocked();
    await call;
    blocked = new Promise<void>((resolve) => (releaseBlocked = resolve));
    // Configured lease: 40 s; this call's: at most 3 s + the margin.
    expect(seconds).toBeLessThanOrEqual(3 + LEASE_MARGIN_SECONDS);
    expect(seconds).toBeGreaterThan(LEASE_MARGIN_SECONDS - 1);
  });

  it("an Idempotency-Key of 201 characters: 400 VALIDATION_ERROR naming the header; the handler does not run", async () => {
    const answer = await send(body("too long"), "k".repeat(201));
    expect(answer.error?.code).toBe("VALIDATION_ERROR");
    expect(answer.error?.message).toMatch(/Idempotency-Key/);
    expect(runs.get("too long")).toBeUndefined();
  });
});

/** Through the real server: the REST bridge and gRPC reach the same mechanism. */
describe("Idempotency-Key through the real server", () => {
  let h: ApiHarness;
  let secret: string;
  let keyId: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret, keyId } = await h.newCompanyWithKey(["mail.conversions.write"]));
  });
  afterAll(async () => h?.close());

  const conversion: JsonObject = { eventId: "evt-1", eventType: "purchase", email: "ada@example.com", revenue: 49.95 };

  function post(key: string, json: JsonObject): Promise<Response> {
    return h.fetch("/mail/v1/conversions", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", "idempotency-key": key },
      body: JSON.stringify(json),
    });
  }

  /** A completed record, as a first call would have left it (the handler itself is someone else's). */
  async function seed(key: string, answer: { response: Uint8Array } | { errorCode: string; errorMessage: string }): Promise<void> {
    const rpc = "mail.v1.MailService/RecordConversion";
    const hash = messageFingerprint(rpc, RecordConversionRequestSchema, messageFromPublicJson(RecordConversionRequestSchema, conversion));
    await h.db.query(
      `insert into idempotency_record (api_key_id, idempotency_key, rpc, request_hash, state, response, error_code, error_message, expires_at)
       values ($1, $2, $3, $4, 'completed', $5, $6, $7, now() + interval '1 hour')`,
      [
        keyId,
        key,
        rpc,
        hash,
        "response" in answer ? Buffer.from(answer.response) : null,
        "errorCode" in answer ? answer.errorCode : null,
        "errorCode" in answer ? answer.errorMessage : null,
      ],
    );
  }

  it("POST with an Idempotency-Key of 201 characters answers 400 VALIDATION_ERROR naming Idempotency-Key", async () => {
    const response = await post("k".repeat(201), conversion);
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toMatch(/Idempotency-Key/);
  });

  it("the first answer is replayed over REST, Connect and gRPC with Idempotent-Replayed: true; another body is a 409", async () => {
    const key = randomUUID();
    const stored = create(RecordConversionResponseSchema, {
      conversion: { id: "conv-1", eventId: "evt-1", eventType: ConversionEventType.PURCHASE, revenue: "49.95", currency: "USD" },
      outcome: ConversionOutcome.RECORDED,
    });
    await seed(key, { response: toBinary(RecordConversionResponseSchema, stored) });

    const rest = await post(key, conversion);
    expect(rest.status).toBe(202);
    expect(rest.headers.get("idempotent-replayed")).toBe("true");
    expect(rest.headers.get("x-ratelimit-limit")).toBe("300");
    const json = (await rest.json()) as { conversion: { id: string }; outcome: string };
    expect(json.conversion.id).toBe("conv-1");
    expect(json.outcome).toBe("recorded");

    const request = messageFromPublicJson(RecordConversionRequestSchema, conversion);
    for (const transport of [
      createGrpcTransport({ baseUrl: h.app.grpcUrl }),
      createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" }),
    ]) {
      let header: Headers | undefined;
      const answer = await createClient(MailService, transport).recordConversion(request, {
        headers: { authorization: `Bearer ${secret}`, "idempotency-key": key },
        onHeader: (hh) => {
          header = hh;
        },
      });
      expect(answer.conversion?.id).toBe("conv-1");
      expect(header?.get("idempotent-replayed")).toBe("true");
    }

    const conflict = await post(key, { ...conversion, revenue: 10 });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as { error: { code: string } }).error.code).toBe("IDEMPOTENCY_CONFLICT");
  });

  it("a stored error answer is replayed over REST with its status and the header", async () => {
    const key = randomUUID();
    await seed(key, { errorCode: "NOT_FOUND", errorMessage: "No contact with this email address." });
    const response = await post(key, conversion);
    expect(response.status).toBe(404);
    expect(response.headers.get("idempotent-replayed")).toBe("true");
    expect(await response.json()).toEqual({ error: { code: "NOT_FOUND", message: "No contact with this email address." } });
  });
});

type Placement = "header" | "body" | "both";

interface SendAnswerJson {
  readonly id: string;
  readonly status: string;
  readonly replayed: boolean;
}

/** What one send answered, whatever the door. */
interface SendOutcome {
  readonly status: number;
  /** The answer body on 202, the error code otherwise. */
  readonly answer?: SendAnswerJson;
  readonly code?: string;
  readonly message?: string;
  /** The `Idempotent-Replayed` header. */
  readonly replayedHeader: string | null;
  readonly retryAfter: string | null;
}

/**
 * POST /mail/v1/send through the real server, with the Temporal worker and
 * the simulator behind it: the per-API-key answer store and the
 * company-wide naming of the message are one rule, whatever door the call
 * comes through and wherever the key is written.
 */
describe("POST /mail/v1/send: one idempotency rule for the header and the body key (real server)", () => {
  /** Short, so that a claim left behind by a failed request ends within the test. */
  const LEASE_SECONDS = 4;
  let h: SendingHarness;

  beforeAll(async () => {
    h = await startSendingHarness({ idempotencyLeaseSeconds: LEASE_SECONDS });
  }, 120_000);
  afterAll(async () => h?.close());

  const messagesWithKey = async (companyId: string, key: string): Promise<number> =>
    Number(
      (
        await h.db.query<{ n: string }>(`select count(*)::text as n from message where company_id = $1 and idempotency_key = $2`, [
          companyId,
          key,
        ])
      ).rows[0]?.n,
    );

  function keyed(body: JsonObject, key: string, placement: Placement): { body: JsonObject; headers: Record<string, string> } {
    return {
      body: placement === "header" ? body : { ...body, idempotencyKey: key },
      headers: placement === "body" ? {} : { "idempotency-key": key },
    };
  }

  async function rest(secret: string, body: JsonObject, key: string, placement: Placement): Promise<SendOutcome> {
    const request = keyed(body, key, placement);
    const response = await h.send(secret, request.body, request.headers);
    const json = (await response.json()) as SendAnswerJson | { error: { code: string; message: string } };
    const common = {
      status: response.status,
      replayedHeader: response.headers.get("idempotent-replayed"),
      retryAfter: response.headers.get("retry-after"),
    };
    return "error" in json ? { ...common, code: json.error.code, message: json.error.message } : { ...common, answer: json };
  }

  async function rpc(door: "grpc" | "connect", secret: string, body: JsonObject, key: string, placement: Placement): Promise<SendOutcome> {
    const request = keyed(body, key, placement);
    const transport =
      door === "grpc" ? createGrpcTransport({ baseUrl: h.app.grpcUrl }) : createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" });
    let header: Headers | undefined;
    try {
      const response = await createClient(MailService, transport).sendMessage(messageFromPublicJson(SendMessageRequestSchema, request.body), {
        headers: { authorization: `Bearer ${secret}`, ...request.headers },
        onHeader: (hh) => {
          header = hh;
        },
      });
      const answer = { id: response.id, status: MessageStatus[response.status].toLowerCase(), replayed: response.replayed };
      return { status: 202, answer, replayedHeader: header?.get("idempotent-replayed") ?? null, retryAfter: null };
    } catch (error) {
      const apiError = apiErrorFrom(error);
      if (!apiError) throw error;
      return {
        status: apiError.httpStatus,
        code: apiError.code,
        message: apiError.message,
        replayedHeader: apiError.headers["idempotent-replayed"] ?? null,
        retryAfter: apiError.headers["retry-after"] ?? null,
      };
    }
  }

  const receipt: JsonObject = { to: "delivered@customer.example", subject: "Your receipt", html: "<p>Thanks</p>", tags: { kind: "receipt" } };
  const otherReceipt: JsonObject = { ...receipt, subject: "Another receipt" };

  it("a replay answers the first body with replayed: true and Idempotent-Replayed: true, over REST, gRPC and Connect", async () => {
    const s = await h.readySender();
    const key = randomUUID();
    const first = await rest(s.secret, receipt, key, "header");
    expect(first).toMatchObject({ status: 202, replayedHeader: null, answer: { id: expect.any(String), status: "queued", replayed: false } });

    const again = await rest(s.secret, receipt, key, "header");
    expect(again).toMatchObject({ status: 202, replayedHeader: "true" });
    expect(again.answer).toEqual({ ...first.answer, replayed: true });

    for (const door of ["grpc", "connect"] as const) {
      const viaRpc = await rpc(door, s.secret, receipt, key, "header");
      expect(viaRpc).toMatchObject({ status: 202, replayedHeader: "true" });
      expect(viaRpc.answer).toEqual({ ...first.answer, replayed: true });
    }
    expect(await messagesWithKey(s.companyId, key)).toBe(1);
  });

  describe("the same API key, the key in the header, the body or both", () => {
    const placements: Placement[] = ["header", "body", "both"];
    const cases = placements.flatMap((first) => placements.map((then) => ({ first, then })));

    it.each(cases)("first in the $first, then in the $then: the same body replays, another body is a 409", async ({ first, then }) => {
      const s = await h.readySender();
      const key = randomUUID();
      const original = await rest(s.secret, receipt, key, first);
      expect(original).toMatchObject({ status: 202, replayedHeader: null, answer: { replayed: false } });

      const same = await rest(s.secret, receipt, key, then);
      expect(same).toMatchObject({ status: 202, replayedHeader: "true" });
      expect(same.answer).toEqual({ ...original.answer, replayed: true });

      const different = await rest(s.secret, otherReceipt, key, then);
      expect(different).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
      const differentViaGrpc = await rpc("grpc", s.secret, otherReceipt, key, then);
      expect(differentViaGrpc).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
      expect(await messagesWithKey(s.companyId, key)).toBe(1);
    });
  });

  it("a header key and a different body key: 400 VALIDATION_ERROR naming idempotencyKey, nothing queued", async () => {
    const s = await h.readySender();
    const response = await h.send(s.secret, { ...receipt, idempotencyKey: "in-the-body" }, { "idempotency-key": "in-the-header" });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toMatch(/idempotencyKey/);
    expect(await messagesWithKey(s.companyId, "in-the-body")).toBe(0);
    expect(await messagesWithKey(s.companyId, "in-the-header")).toBe(0);
  });

  it("another API key of the same company: the same body gets the original message (replayed), another body a 409", async () => {
    const s = await h.readySender();
    const { secret: otherSecret } = await h.newKey(s.companyId, ["mail.transactional.send"], "second server");
    const key = randomUUID();
    const original = await rest(s.secret, receipt, key, "header");
    expect(original.answer?.replayed).toBe(false);

    for (const placement of ["header", "body", "both"] as const) {
      const same = await rest(otherSecret, receipt, key, placement);
      expect(same).toMatchObject({ status: 202, replayedHeader: "true", answer: { id: original.answer?.id, replayed: true } });
    }
    const sameViaGrpc = await rpc("grpc", otherSecret, receipt, key, "body");
    expect(sameViaGrpc).toMatchObject({ status: 202, replayedHeader: "true", answer: { id: original.answer?.id, replayed: true } });

    const different = await rest(otherSecret, otherReceipt, key, "body");
    expect(different).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
    expect(await rpc("connect", otherSecret, otherReceipt, key, "header")).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
    // The 409 says the key names another request; it is not kept as this key's answer.
    expect(await rest(otherSecret, receipt, key, "header")).toMatchObject({ status: 202, answer: { id: original.answer?.id, replayed: true } });
    expect(await messagesWithKey(s.companyId, key)).toBe(1);
  });

  it("the key keeps naming the message after the per-key answer is forgotten: same body replays, another body is a 409", async () => {
    const s = await h.readySender();
    const key = randomUUID();
    const original = await rest(s.secret, receipt, key, "body");
    await h.db.query(`update idempotency_record set expires_at = now() - interval '1 second' where idempotency_key = $1`, [key]);

    const different = await rest(s.secret, otherReceipt, key, "header");
    expect(different).toMatchObject({ status: 409, code: "IDEMPOTENCY_CONFLICT" });
    const same = await rest(s.secret, receipt, key, "header");
    expect(same).toMatchObject({ status: 202, replayedHeader: "true", answer: { id: original.answer?.id, replayed: true } });
    expect(await messagesWithKey(s.companyId, key)).toBe(1);
  });

  it("10 concurrent identical sends from two keys of the company, the key in the header or the body: one message, one first answer", async () => {
    const s = await h.readySender();
    const { secret: otherSecret } = await h.newKey(s.companyId, ["mail.transactional.send"], "second server");
    const key = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => rest(i % 2 ? otherSecret : s.secret, receipt, key, i % 4 < 2 ? "header" : "body")),
    );
    for (const answer of answers) expect(answer.status).toBe(202);
    expect(new Set(answers.map((a) => a.answer?.id)).size).toBe(1);
    expect(answers.filter((a) => a.answer?.replayed === false)).toHaveLength(1);
    for (const answer of answers) expect(answer.replayedHeader).toBe(answer.answer?.replayed ? "true" : null);
    expect(await messagesWithKey(s.companyId, key)).toBe(1);
  });

  it("a request cut off by a database outage leaves nothing holding its key: the retry runs, once", async () => {
    const s = await h.readySender();
    const key = randomUUID();
    const database = h.db.name;

    // Holds the send inside its handler: the lookup of the key waits for this lock.
    const blocker = new pg.Client({ connectionString: h.db.url });
    blocker.on("error", () => undefined);
    await blocker.connect();
    await blocker.query("begin");
    await blocker.query("lock table message in access exclusive mode");
    const cutOff = rest(s.secret, receipt, key, "header");
    let failed: SendOutcome;
    try {
      // In its handler: waiting for the lock (the statement text of a backend
      // still in parse analysis is not reported yet, so the lock wait is what tells).
      await waitUntil(async () => {
        const waiting = await blocker.query(`select 1 from pg_locks where relation = 'message'::regclass and not granted`);
        return (waiting.rowCount ?? 0) > 0;
      });

      // The outage: every connection cut, no new one accepted, so the request fails and cannot drop its claim.
      await admin(`alter database ${database} allow_connections false`);
      await admin(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${database}'`);
      failed = await cutOff;
    } finally {
      await admin(`alter database ${database} allow_connections true`);
      await blocker.end().catch(() => undefined);
    }
    // A 5xx: the spec's retry guidance says retry it with the same key.
    expect(failed.status).toBeGreaterThanOrEqual(500);

    // A send keeps no claim (its key names the message, which was never written): nothing is left behind.
    const left = await h.db.query(`select 1 from idempotency_record where idempotency_key = $1`, [key]);
    expect(left.rowCount).toBe(0);

    // The retry runs at once.
    const retry = await rest(s.secret, receipt, key, "header");
    expect(retry).toMatchObject({ status: 202, replayedHeader: null, answer: { replayed: false } });
    expect(await messagesWithKey(s.companyId, key)).toBe(1);
    expect(await rest(s.secret, receipt, key, "body")).toMatchObject({ status: 202, answer: { id: retry.answer?.id, replayed: true } });
  });
});

async function waitUntil(check: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await sleep(25);
  }
}

/** One statement on the server's maintenance database (never the test database itself). */
async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres" });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
