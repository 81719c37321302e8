import { constants as http2 } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";
import { type Answer, h2cOpen, type Listener, rawHttp1Request, requestOn } from "./doors.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

/**
 * The answers Fastify and Node produce before any route runs, on both
 * listeners: each one in the contract's error shape, with X-Request-Id and
 * `Cache-Control: no-store` like every other answer. (HTTP/2 refuses some
 * of these requests in the protocol itself, with a stream reset and no
 * answer at all; those cases say so.)
 */
describe.each<Listener>(["http1", "h2c"])("Fastify's own answers on the %s listener", (listener) => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness({ maxBodyBytes: 64 * 1024 });
    ({ secret } = await h.newCompanyWithKey());
  });
  afterAll(async () => h?.close());

  const urls = () => ({ httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl });
  const send = (request: { method: string; path: string; headers?: Record<string, string>; body?: string }) =>
    requestOn(listener, urls(), request);

  function expectErrorAnswer(answer: Answer, status: number, code: string): ErrorBody["error"] {
    expect(answer.status).toBe(status);
    expect(answer.headers["x-request-id"]).toMatch(/^\S{8,}$/);
    expect(answer.headers["cache-control"]).toBe("no-store");
    expect(answer.headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    expect(Object.keys(body)).toEqual(["error"]);
    const error = body.error as ErrorBody["error"];
    expect(Object.keys(error).sort()).toEqual(["code", "message"]);
    expect(error.code).toBe(code);
    return error;
  }

  it("a path that is not valid percent-encoding answers 400 VALIDATION_ERROR", async () => {
    const answer = await send({ method: "GET", path: "/mail/v1/messages/%E0%A4%A", headers: { authorization: `Bearer ${secret}` } });
    expect(expectErrorAnswer(answer, 400, "VALIDATION_ERROR").message).toContain("path");
  });

  it("a path parameter over the limit answers 400 VALIDATION_ERROR", async () => {
    const answer = await send({ method: "GET", path: `/mail/v1/messages/${"a".repeat(1_000)}`, headers: { authorization: `Bearer ${secret}` } });
    expect(expectErrorAnswer(answer, 400, "VALIDATION_ERROR").message).toContain("path parameter");
  });

  it("an email address fits in a path parameter (not refused as too long)", async () => {
    const email = `${"a".repeat(64)}@${"b".repeat(63)}.${"c".repeat(63)}.example.com`;
    const answer = await send({ method: "GET", path: `/mail/v1/contacts/${encodeURIComponent(email)}`, headers: { authorization: `Bearer ${secret}` } });
    expect(answer.status).not.toBe(400);
    expect(answer.status).not.toBe(414);
  });

  it("an unsupported media type answers 400 VALIDATION_ERROR", async () => {
    const answer = await send({
      method: "POST",
      path: "/mail/v1/send",
      headers: { authorization: `Bearer ${secret}`, "content-type": "text/csv" },
      body: "to,subject\na@example.com,hi",
    });
    expect(expectErrorAnswer(answer, 400, "VALIDATION_ERROR").message).toContain("Content-Type");
  });

  it("a body over the limit answers 413 PAYLOAD_TOO_LARGE", async () => {
    // A route with the listener's limit (a send's own is larger: its attachments, test/sending/attachments.test.ts).
    const answer = await send({
      method: "POST",
      path: "/mail/v1/lists",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "x".repeat(70 * 1024) }),
    });
    expectErrorAnswer(answer, 413, "PAYLOAD_TOO_LARGE");
  });

  it("an unknown route answers 404 NOT_FOUND", async () => {
    const answer = await send({ method: "GET", path: "/nowhere/at/all", headers: { authorization: `Bearer ${secret}` } });
    expectErrorAnswer(answer, 404, "NOT_FOUND");
  });

  if (listener === "http1") {
    const head = (lines: string[]) => `${["POST /mail/v1/send HTTP/1.1", "host: localhost", ...lines].join("\r\n")}\r\n\r\n`;

    it("an invalid Content-Length answers 400 VALIDATION_ERROR", async () => {
      const answer = await rawHttp1Request(
        h.app.httpUrl,
        head([`authorization: Bearer ${secret}`, "content-type: application/json", "content-length: twelve"]) + "{}",
      );
      expect(expectErrorAnswer(answer, 400, "VALIDATION_ERROR").message).toContain("Content-Length");
    });

    it("two different Content-Length headers answer 400 VALIDATION_ERROR", async () => {
      const answer = await rawHttp1Request(
        h.app.httpUrl,
        head([`authorization: Bearer ${secret}`, "content-type: application/json", "content-length: 2", "content-length: 3"]) + "{}",
      );
      expectErrorAnswer(answer, 400, "VALIDATION_ERROR");
    });

    it("headers over the limit answer 400 VALIDATION_ERROR", async () => {
      const answer = await send({ method: "GET", path: "/mail/v1/me", headers: { authorization: `Bearer ${secret}`, "x-padding": "p".repeat(20_000) } });
      expect(expectErrorAnswer(answer, 400, "VALIDATION_ERROR").message).toContain("headers");
    });

    it("a request that is not HTTP answers 400 VALIDATION_ERROR", async () => {
      const answer = await rawHttp1Request(h.app.httpUrl, "HELLO THERE\r\n\r\n");
      expectErrorAnswer(answer, 400, "VALIDATION_ERROR");
    });
  } else {
    async function resetCodeOf(headers: Record<string, string>, body: string): Promise<number | undefined> {
      const exchange = h2cOpen(h.app.grpcUrl, headers);
      exchange.end(body);
      try {
        const { answer, resetCode } = await exchange.result;
        expect(answer).toBeUndefined();
        return resetCode;
      } finally {
        exchange.session.destroy();
      }
    }

    it("a Content-Length that differs from the body is refused by HTTP/2 itself (stream reset, no answer)", async () => {
      const code = await resetCodeOf(
        { ":method": "POST", ":path": "/mail/v1/send", authorization: `Bearer ${secret}`, "content-type": "application/json", "content-length": "12" },
        "{}",
      );
      expect(code).toBe(http2.NGHTTP2_PROTOCOL_ERROR);
    });

    it("headers over the limit are refused by HTTP/2 itself (stream reset, no answer)", async () => {
      const code = await resetCodeOf({ ":method": "GET", ":path": "/mail/v1/me", "x-padding": "p".repeat(70_000) }, "");
      expect(code).toBeGreaterThan(0);
    });
  }
});
