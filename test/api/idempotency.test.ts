import { randomUUID } from "node:crypto";
import { create, fromJson, type JsonObject, toBinary } from "@bufbuild/protobuf";
import { type Client, createClient, createRouterTransport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiError, apiErrorFrom, ValidationError } from "../../src/contract/api-error.ts";
import { messageFromPublicJson } from "../../src/contract/json-codec.ts";
import { type Accounts, createAccounts } from "../../src/capabilities/accounts/index.ts";
import { createIdempotency, type IdempotencyGuard, requestFingerprint } from "../../src/capabilities/idempotency/index.ts";
import { createRateLimiter, type PostgresRateLimiter } from "../../src/capabilities/rate-limit/index.ts";
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
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";

type Mail = Client<typeof MailService>;

/** What one call answered: the message id, or the contract error; and whether it was a replay. */
interface Answer {
  readonly id?: string;
  readonly error?: ApiError;
  readonly replayed: boolean;
}

const SEND_SCOPES = ["mail.transactional.send"];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The mechanism as wired in src/transport/server.ts (the real interceptor
 * chain, the wrapper, PostgreSQL), in process, around a SendMessage whose
 * behaviour the test controls through the subject line.
 */
describe("Idempotency-Key on a POST operation (in-process router, real PostgreSQL)", () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let accounts: Accounts;
  let rateLimiter: PostgresRateLimiter;
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
    async sendMessage(request: { subject?: string }) {
      const subject = request.subject ?? "";
      runs.set(subject, (runs.get(subject) ?? 0) + 1);
      if (subject.startsWith("slow")) await sleep(300);
      if (subject.startsWith("blocked")) await blocked;
      if (subject.startsWith("invalid")) throw new ValidationError([{ field: "to", problem: "is not an email address" }]);
      if (subject.startsWith("boom") && !failOnce.has(subject)) {
        failOnce.add(subject);
        throw new Error("the database went away");
      }
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
    accounts = createAccounts(orm, { apiKeyPepper: "test-pepper", apiKeyPrefix: "tml", keyRotationGraceHours: 24, keyUsageFlushMs: 3_600_000 });
    rateLimiter = createRateLimiter(orm);
    guard = createIdempotency(orm, { idempotencyWindowHours: 24 }, { cleanupEveryMs: 0 });
    impatientGuard = createIdempotency(orm, { idempotencyWindowHours: 24 }, { cleanupEveryMs: 0, waitMs: 300 });
    client = clientWith(guard);
    impatientClient = clientWith(impatientGuard);

    const company = await accounts.service.createCompany("Acme");
    const key = await accounts.service.createApiKey(company.id, "server", SEND_SCOPES);
    ({ secret } = key);
    keyId = key.key.id;
    secretOfOtherKey = (await accounts.service.createApiKey(company.id, "other server", SEND_SCOPES)).secret;
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
      const response = await (options.via ?? client).sendMessage(fromJson(SendMessageRequestSchema, body), {
        headers,
        onHeader: (h) => {
          header = h;
        },
      });
      return { id: response.id, replayed: header?.get("idempotent-replayed") === "true" };
    } catch (error) {
      const apiError = apiErrorFrom(error);
      if (!apiError) throw error;
      return { error: apiError, replayed: apiError.headers["idempotent-replayed"] === "true" };
    }
  }

  function body(subject: string, extra: JsonObject = {}): JsonObject {
    return { to: "ada@example.com", subject, html: "<p>Hi</p>", ...extra };
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
    const first = await send({ to: "ada@example.com", subject: "reordered", html: "<p>Hi</p>", tags: { a: "1", b: "2" }, variables: { x: 1, y: 2 } }, key);
    const second = await send({ variables: { y: 2, x: 1 }, tags: { b: "2", a: "1" }, html: "<p>Hi</p>", subject: "reordered", to: "ada@example.com" }, key);
    expect(second).toEqual({ id: first.id, replayed: true });
    expect(runs.get("reordered")).toBe(1);
  });

  it("same key with another body: 409 IDEMPOTENCY_CONFLICT, the handler does not run", async () => {
    const key = randomUUID();
    await send(body("conflict"), key);
    const other = await send(body("conflict", { html: "<p>Changed</p>" }), key);
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

  it("another API key with the same idempotency key is an independent request", async () => {
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
    expect(rows).toEqual([{ api_key_id: keyId, rpc: "mail.v1.MailService/SendMessage", state: "completed", hours: "24" }]);
  });

  it("a request still in progress after the wait: IDEMPOTENCY_CONFLICT saying so", async () => {
    const key = randomUUID();
    const first = send(body("blocked"), key, { via: impatientClient });
    await sleep(100);
    const second = await send(body("blocked"), key, { via: impatientClient });
    expect(second.error?.code).toBe("IDEMPOTENCY_CONFLICT");
    expect(second.error?.message).toMatch(/still in progress/);
    releaseBlocked();
    const done = await first;
    expect(done.replayed).toBe(false);
    expect(await send(body("blocked"), key, { via: impatientClient })).toEqual({ id: done.id, replayed: true });
    expect(runs.get("blocked")).toBe(1);
    blocked = new Promise<void>((resolve) => (releaseBlocked = resolve));
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
    const hash = requestFingerprint(rpc, RecordConversionRequestSchema, messageFromPublicJson(RecordConversionRequestSchema, conversion));
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
      conversion: { id: "conv-1", eventId: "evt-1", eventType: ConversionEventType.PURCHASE, revenue: 49.95, currency: "USD" },
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
