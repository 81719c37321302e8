import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

describe("JSON HTTP conventions", () => {
  let h: ApiHarness;
  let secret: string;
  let companyId: string;

  beforeAll(async () => {
    h = await startApiHarness({ maxBodyBytes: 64 * 1024 });
    ({ secret, companyId } = await h.newCompanyWithKey());
  });
  afterAll(async () => h?.close());

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    h.fetch(path, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...headers },
      body,
    });

  function expectCommonHeaders(response: Response): void {
    expect(response.headers.get("x-request-id")).toMatch(/\S{8,}/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
  }

  it("GET /mail/v1/me answers the account object in full", async () => {
    const response = await h.fetch("/mail/v1/me", bearer(secret));
    expect(response.status).toBe(200);
    expectCommonHeaders(response);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toEqual({
      organization: { id: companyId, name: "Acme Inc." },
      key: {
        id: expect.any(String),
        name: "test key",
        prefix: secret.slice(0, 12),
        scopes: expect.arrayContaining(["mail.events.read", "mail.transactional.send"]),
        expiresAt: null,
      },
      entitlements: { api: true, smtp: false },
      limits: { requestsPerMinute: 600, idempotencyWindowHours: 24, keyRotationGraceHours: 24 },
      apiVersion: "v1",
      // Beyond the spec's fields: the company's Mail credits (a new company has none).
      credits: { balance: "0" },
    });
  });

  it("every answer carries X-Request-Id, Cache-Control: no-store and JSON, errors included", async () => {
    const answers = [
      await h.fetch("/mail/v1/me", bearer(secret)),
      await h.fetch("/mail/v1/me"),
      await h.fetch("/mail/v1/nowhere"),
      await post("/mail/v1/send", "{not json"),
      await h.fetch("/mail/v1/openapi.json"),
    ];
    for (const response of answers) expectCommonHeaders(response);
    const ids = new Set(answers.map((r) => r.headers.get("x-request-id")));
    expect(ids.size).toBe(answers.length);
  });

  it("echoes a sane incoming X-Request-Id and replaces an unsafe one", async () => {
    const sane = await h.fetch("/mail/v1/me", bearer(secret, { "x-request-id": "req-1234567890abc" }));
    expect(sane.headers.get("x-request-id")).toBe("req-1234567890abc");
    const unsafe = await h.fetch("/mail/v1/me", bearer(secret, { "x-request-id": "bad id with spaces <script>" }));
    expect(unsafe.headers.get("x-request-id")).not.toContain(" ");
    expect(unsafe.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("unknown routes answer 404 NOT_FOUND in the error shape", async () => {
    const response = await h.fetch("/mail/v1/does-not-exist", bearer(secret));
    expect(response.status).toBe(404);
    expect(((await response.json()) as ErrorBody).error.code).toBe("NOT_FOUND");
  });

  it("a body over the documented maximum answers 413 PAYLOAD_TOO_LARGE", async () => {
    // A route with the listener's limit (a send's own is larger: its attachments, test/sending/attachments.test.ts).
    const big = JSON.stringify({ name: "x".repeat(70 * 1024) });
    const response = await post("/mail/v1/lists", big);
    expect(response.status).toBe(413);
    expectCommonHeaders(response);
    const body = (await response.json()) as ErrorBody;
    expect(body.error.code).toBe("PAYLOAD_TOO_LARGE");
    expect(body.error.message).toContain(String(64 * 1024));
  });

  it("malformed JSON, wrong content type, non-object bodies answer 400 VALIDATION_ERROR", async () => {
    const cases: Array<[string, Record<string, string>]> = [
      ["{not json", {}],
      ["", {}],
      ["[1,2,3]", {}],
      ["42", {}],
      ["to=a@example.com", { "content-type": "application/x-www-form-urlencoded" }],
      ["hello", { "content-type": "text/plain" }],
    ];
    for (const [body, headers] of cases) {
      const response = await post("/mail/v1/send", body, headers);
      expect(response.status, `${JSON.stringify(body)} ${JSON.stringify(headers)}`).toBe(400);
      expectCommonHeaders(response);
      expect(((await response.json()) as ErrorBody).error.code).toBe("VALIDATION_ERROR");
    }
  });

  it("wrong types, unknown fields and unknown enum values answer 400 naming each field", async () => {
    const response = await post(
      "/mail/v1/send",
      JSON.stringify({ subject: 42, html: ["x"], tags: { a: 1 }, surprise: true }),
    );
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.code).toBe("VALIDATION_ERROR");
    for (const field of ["subject", "html", "tags.a", "surprise"]) expect(error.message).toContain(field);

    const query = await h.fetch("/mail/v1/messages?limit=ten&status=lost&since=yesterday", bearer(secret));
    expect(query.status).toBe(400);
    const q = ((await query.json()) as ErrorBody).error;
    for (const field of ["limit", "status", "since"]) expect(q.message).toContain(field);
    expect(q.message).toContain("queued");

    const unknownParam = await h.fetch("/mail/v1/messages?colour=red", bearer(secret));
    expect(unknownParam.status).toBe(400);
    expect(((await unknownParam.json()) as ErrorBody).error.message).toContain("colour");
  });

  it("every operation of the spec is built: GET /mail/v1/forms answers a list page, not 501", async () => {
    const response = await h.fetch("/mail/v1/forms", bearer(secret));
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    expect(await response.json()).toEqual({ items: [] });
  });

  it("the AdminService is not reachable through the public JSON routes", async () => {
    const response = await h.fetch("/mail/v1/companies", bearer(secret));
    expect(response.status).toBe(404);
    // Nor through Connect on the public listeners: it is on the operator listener only.
    const connect = await h.fetch("/mail.v1.AdminService/ListCompanies", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: "{}",
    });
    expect(connect.status).toBe(404);
  });
});
