import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../src/gen/mail/v1/admin_pb.js";
import { type ApiHarness, OPERATOR_TOKEN, startApiHarness } from "../support/api-harness.ts";
import { requestOn } from "./doors.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

/** A well-formed key nobody was given: costs an HMAC and a lookup to refuse. */
const randomKey = () => `tml_${randomBytes(32).toString("base64url")}`;

/**
 * A flood of made-up keys is limited per client address, before any
 * lookup: after 30 refused keys in a minute, the address gets 429 with
 * retry-after, on both public listeners (the count is per process), and
 * even a valid key from that address waits. The operator listener keeps a
 * budget of its own.
 */
describe("failed authentications per client address", () => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness();
    ({ secret } = await h.newCompanyWithKey());
  });
  afterAll(async () => h?.close());

  const urls = () => ({ httpUrl: h.app.httpUrl, grpcUrl: h.app.grpcUrl });
  const me = (listener: "http1" | "h2c", key: string) =>
    requestOn(listener, urls(), { method: "GET", path: "/mail/v1/me", headers: { authorization: `Bearer ${key}` } });

  it("refuses an address after 30 failures a minute, on both listeners, before looking keys up", async () => {
    expect((await me("http1", secret)).status).toBe(200);
    for (let i = 0; i < 30; i += 1) {
      const answer = await me(i % 2 === 0 ? "http1" : "h2c", randomKey());
      expect(answer.status, `failure ${i + 1}`).toBe(401);
    }

    for (const listener of ["http1", "h2c"] as const) {
      const flooded = await me(listener, randomKey());
      expect(flooded.status, listener).toBe(429);
      expect((JSON.parse(flooded.body) as ErrorBody).error.code).toBe("RATE_LIMITED");
      const retryAfter = Number(flooded.headers["retry-after"]);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(flooded.headers["x-request-id"]).toMatch(/\S{8,}/);

      // Refused before the lookup: a valid key from this address waits too.
      const valid = await me(listener, secret);
      expect(valid.status, listener).toBe(429);
    }

    // The operator listener keeps its own budget: the public flood from this address does not lock out mailctl.
    const admin = createClient(AdminService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const operatorCalls = await admin.listCompanies({}, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } });
    expect(operatorCalls.companies.length).toBeGreaterThan(0);
  });

  it("the operator listener counts its own failures: 30 wrong operator tokens lock out that address there only", async () => {
    const admin = createClient(AdminService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const wrong = () =>
      admin.listCompanies({}, { headers: { authorization: "Bearer wrong-operator-token" } }).then(
        () => undefined,
        (error: unknown) => ConnectError.from(error),
      );
    for (let i = 0; i < 30; i += 1) expect((await wrong())?.code, `failure ${i + 1}`).toBe(Code.PermissionDenied);
    expect((await wrong())?.code).toBe(Code.ResourceExhausted);
  });

  it("a request without any key is not counted and still answers 401", async () => {
    const answer = await requestOn("http1", urls(), { method: "GET", path: "/mail/v1/me" });
    expect(answer.status).toBe(401);
  });
});
