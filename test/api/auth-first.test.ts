import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { type Answer, type Listener, requestOn } from "./doors.ts";
import { ATTACHMENTS_BODY_ALLOWANCE } from "../../src/transport/http/body-limits.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

const UNKNOWN_KEY = `tml_${"A".repeat(43)}`;

/** Requests the REST bridge refuses before calling the RPC, each paired with what is wrong with it. */
const BAD_REQUESTS: ReadonlyArray<{ name: string; method: string; path: string; contentType?: string; body?: string }> = [
  { name: "malformed JSON", method: "POST", path: "/mail/v1/send", contentType: "application/json", body: "{not json" },
  { name: "an empty body", method: "POST", path: "/mail/v1/send", contentType: "application/json", body: "" },
  { name: "a body that is not an object", method: "POST", path: "/mail/v1/send", contentType: "application/json", body: "[1,2]" },
  { name: "unknown fields", method: "POST", path: "/mail/v1/send", contentType: "application/json", body: '{"surprise":true}' },
  { name: "a wrong content type", method: "POST", path: "/mail/v1/send", contentType: "text/plain", body: "hello" },
  { name: "an invalid query", method: "GET", path: "/mail/v1/messages?limit=ten&colour=red" },
];

/**
 * Authentication comes first on the JSON routes, as it does on gRPC: a
 * request without a valid key learns only that (401), whatever is wrong
 * with its body; an authenticated one gets the 400 with the rate-limit
 * headers every authenticated answer carries.
 */
describe.each<Listener>(["http1", "h2c"])("authentication before the body on the %s listener", (listener) => {
  let h: ApiHarness;
  let secret: string;
  let readOnlySecret: string;

  beforeAll(async () => {
    h = await startApiHarness();
    const company = await h.newCompanyWithKey();
    secret = company.secret;
    readOnlySecret = (await h.newKey(company.companyId, ["mail.contacts.read"], "contacts only")).secret;
  });
  afterAll(async () => h?.close());

  function send(request: (typeof BAD_REQUESTS)[number], authorization?: string): Promise<Answer> {
    const headers: Record<string, string> = {};
    if (authorization) headers.authorization = authorization;
    if (request.contentType) headers["content-type"] = request.contentType;
    return requestOn(listener, { httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl }, {
      method: request.method,
      path: request.path,
      headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
    });
  }

  const codeOf = (answer: Answer) => (JSON.parse(answer.body) as ErrorBody).error.code;

  it.each(BAD_REQUESTS)("$name without a bearer token answers 401 AUTHENTICATION_REQUIRED", async (request) => {
    const answer = await send(request);
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe("AUTHENTICATION_REQUIRED");
    expect(answer.headers["x-request-id"]).toMatch(/\S{8,}/);
  });

  it.each(BAD_REQUESTS)("$name with an unknown key answers 401 API_KEY_INVALID", async (request) => {
    const answer = await send(request, `Bearer ${UNKNOWN_KEY}`);
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe("API_KEY_INVALID");
  });

  it.each(BAD_REQUESTS)("$name with a key lacking the route's scope answers 403 FORBIDDEN", async (request) => {
    const answer = await send(request, `Bearer ${readOnlySecret}`);
    expect(answer.status).toBe(403);
    expect(codeOf(answer)).toBe("FORBIDDEN");
    expect(answer.headers["x-ratelimit-limit"]).toBe("600");
  });

  it.each(BAD_REQUESTS)("$name with a valid key answers 400 VALIDATION_ERROR with the rate-limit headers", async (request) => {
    const answer = await send(request, `Bearer ${secret}`);
    expect(answer.status).toBe(400);
    expect(codeOf(answer)).toBe("VALIDATION_ERROR");
    expect(answer.headers["x-ratelimit-limit"]).toBe("600");
    expect(Number(answer.headers["x-ratelimit-remaining"])).toBeLessThan(600);
    expect(Number(answer.headers["x-ratelimit-reset"])).toBeGreaterThan(0);
  });

  it("a refused body counts against the key's budget once, like any other call", async () => {
    const malformed = BAD_REQUESTS[0] as (typeof BAD_REQUESTS)[number];
    // Two calls in the same one-minute window (the one after a window change is retried).
    for (let attempt = 0; ; attempt += 1) {
      const before = await requestOn(listener, { httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl }, {
        method: "GET",
        path: "/mail/v1/me",
        headers: { authorization: `Bearer ${secret}` },
      });
      const refused = await send(malformed, `Bearer ${secret}`);
      const sameWindow = Number(refused.headers["x-ratelimit-reset"]) <= Number(before.headers["x-ratelimit-reset"]);
      if (!sameWindow && attempt < 2) continue;
      expect(Number(refused.headers["x-ratelimit-remaining"])).toBe(Number(before.headers["x-ratelimit-remaining"]) - 1);
      break;
    }
  });

  it("a body over the size limit with an unknown key answers 401 API_KEY_INVALID", async () => {
    const answer = await requestOn(listener, { httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl }, {
      method: "POST",
      path: "/mail/v1/send",
      headers: { authorization: `Bearer ${UNKNOWN_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ to: "a@example.com", subject: "x", html: "x".repeat(h.app.config.maxBodyBytes + ATTACHMENTS_BODY_ALLOWANCE) }),
    });
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe("API_KEY_INVALID");
  });
});
