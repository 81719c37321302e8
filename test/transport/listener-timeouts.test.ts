import { connect as http2Connect } from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { h2cOpen, rawHttp1 } from "../api/doors.ts";
import { GOOD_KEY, type StubApi, startStubApi } from "./stub-api.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

/**
 * Clients that hold a connection without finishing their request are cut
 * off, on both listeners. The limits are shortened so the tests are quick;
 * no test measures how long anything took.
 */
describe("listener timeouts", () => {
  let api: StubApi;

  beforeAll(async () => {
    api = await startStubApi({
      // The session limit well past the request deadline: a stall of the test process longer than
      // the session limit would otherwise let both fire at once, and the session close reset the stream.
      timeouts: { requestMs: 800, headersMs: 800, keepAliveMs: 500, http2SessionMs: 3_000, idleMs: 5_000 },
    });
  });
  afterAll(async () => api?.close());

  const sendHead = (contentLength: number) =>
    [
      "POST /mail/v1/send HTTP/1.1",
      `host: ${new URL(api.httpUrl).host}`,
      `authorization: Bearer ${GOOD_KEY}`,
      "content-type: application/json",
      `content-length: ${contentLength}`,
      "",
      "",
    ].join("\r\n");

  function expectTimeoutAnswer(status: number | undefined, headers: Readonly<Record<string, string>>, body: string): void {
    expect(status).toBe(400);
    expect(headers["x-request-id"]).toMatch(/\S{8,}/);
    expect(headers["cache-control"]).toBe("no-store");
    const { error } = JSON.parse(body) as ErrorBody;
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.message).toMatch(/not received completely/);
  }

  it("HTTP/1.1: a body that stops arriving is answered 400 and the connection closed", async () => {
    const exchange = await rawHttp1(api.httpUrl, sendHead(100) + '{"to":');
    const { answer } = await exchange.closed;
    expect(answer).toBeDefined();
    expectTimeoutAnswer(answer?.status, answer?.headers ?? {}, answer?.body ?? "");
  });

  it("HTTP/1.1: a body dribbled a byte at a time is cut off all the same", async () => {
    const exchange = await rawHttp1(api.httpUrl, sendHead(10_000));
    const drip = setInterval(() => exchange.socket.write(" "), 100);
    try {
      const { answer } = await exchange.closed;
      expectTimeoutAnswer(answer?.status, answer?.headers ?? {}, answer?.body ?? "");
    } finally {
      clearInterval(drip);
    }
  });

  it("HTTP/1.1: headers that never end are answered 400 and the connection closed", async () => {
    const exchange = await rawHttp1(api.httpUrl, `GET /mail/v1/me HTTP/1.1\r\nhost: x\r\nx-slow: `);
    const drip = setInterval(() => exchange.socket.write("a"), 100);
    try {
      const { answer } = await exchange.closed;
      expectTimeoutAnswer(answer?.status, answer?.headers ?? {}, answer?.body ?? "");
    } finally {
      clearInterval(drip);
    }
  });

  it("HTTP/1.1: an idle keep-alive connection is closed", async () => {
    const exchange = await rawHttp1(api.httpUrl, `GET /mail/v1/me HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${GOOD_KEY}\r\n\r\n`);
    const { answer } = await exchange.closed;
    expect(answer?.status).toBe(200);
  });

  const h2Headers = {
    ":method": "POST",
    ":path": "/mail/v1/send",
    authorization: `Bearer ${GOOD_KEY}`,
    "content-type": "application/json",
  };

  it("h2c: a body that stops arriving is answered 400 and the stream closed", async () => {
    const exchange = h2cOpen(api.grpcUrl, h2Headers);
    exchange.write('{"to":');
    try {
      const { answer } = await exchange.result;
      expect(answer).toBeDefined();
      expectTimeoutAnswer(answer?.status, answer?.headers ?? {}, answer?.body ?? "");
    } finally {
      exchange.session.destroy();
    }
  });

  it("h2c: a body dribbled a byte at a time is cut off, and never handled as complete", async () => {
    const exchange = h2cOpen(api.grpcUrl, h2Headers);
    // A complete JSON object: handled as a send if the partial body were taken for the whole.
    exchange.write('{"to":"a@example.com","subject":"s","html":"<p>x</p>"}');
    const drip = setInterval(() => exchange.write(" "), 100);
    try {
      const { answer } = await exchange.result;
      expectTimeoutAnswer(answer?.status, answer?.headers ?? {}, answer?.body ?? "");
    } finally {
      clearInterval(drip);
      exchange.session.destroy();
    }
  });

  it("h2c: an idle session is closed by the server", async () => {
    const session = http2Connect(api.grpcUrl);
    session.on("error", () => undefined);
    const closed = new Promise<void>((resolve) => session.once("close", resolve));
    const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
    await Promise.race([goaway, closed]);
    await closed;
    expect(session.closed || session.destroyed).toBe(true);
  });
});
