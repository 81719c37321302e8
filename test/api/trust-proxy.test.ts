import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { type ApiHarness, startApiHarness } from "../support/api-harness.ts";

/**
 * TRUST_PROXY decides whose address a request comes from, which the
 * failed-authentication limit counts per (and the hosted forms record and
 * the logs show). Every request of this test comes from 127.0.0.1, as it
 * would from a load balancer, with X-Forwarded-For naming two clients.
 */
const randomKey = () => `tml_${randomBytes(32).toString("base64url")}`;
const CLIENT_A = "203.0.113.7";
const CLIENT_B = "198.51.100.23";

describe("TRUST_PROXY", () => {
  const harnesses: ApiHarness[] = [];
  afterAll(async () => Promise.all(harnesses.map((h) => h.close())));

  async function apiWith(trustProxy: string | undefined): Promise<ApiHarness> {
    const h = await startApiHarness({ trustProxy: loadConfig(trustProxy === undefined ? {} : { TRUST_PROXY: trustProxy }).trustProxy });
    harnesses.push(h);
    return h;
  }

  /** GET /mail/v1/me with a made-up key, "from" `client`; the status. */
  async function failedAuthentication(h: ApiHarness, client: string): Promise<number> {
    const response = await h.fetch("/mail/v1/me", { headers: { authorization: `Bearer ${randomKey()}`, "x-forwarded-for": client } });
    return response.status;
  }

  /** 30 refused keys from client A, then one more from A and one from B. */
  async function floodFromA(h: ApiHarness): Promise<{ a: number; b: number }> {
    for (let i = 0; i < 30; i += 1) expect(await failedAuthentication(h, CLIENT_A)).toBe(401);
    return { a: await failedAuthentication(h, CLIENT_A), b: await failedAuthentication(h, CLIENT_B) };
  }

  it("is off by default: X-Forwarded-For is ignored, every request counts for the peer", async () => {
    const h = await apiWith(undefined);
    // Client B is limited too: a client cannot escape the limit by naming another address.
    expect(await floodFromA(h)).toEqual({ a: 429, b: 429 });
  });

  it("with the proxies' addresses, takes the client's address from X-Forwarded-For", async () => {
    const h = await apiWith("loopback, 10.0.0.0/8");
    expect(await floodFromA(h)).toEqual({ a: 429, b: 401 });
  });

  it("with a hop count, takes the address the trusted hop saw", async () => {
    const h = await apiWith("1");
    expect(await floodFromA(h)).toEqual({ a: 429, b: 401 });
    // With one trusted hop, the left-most entries are the client's own claims: the right-most one counts.
    expect(await failedAuthentication(h, `${CLIENT_B}, ${CLIENT_A}`)).toBe(429);
  });

  it("never trusts it on the operator listener (refused operator tokens count per peer)", async () => {
    const h = await apiWith("true");
    for (let i = 0; i < 30; i += 1) {
      const response = await fetch(new URL("/mail.v1.AdminService/ListCompanies", h.app.operatorUrl), {
        method: "POST",
        headers: { authorization: "Bearer not-the-operator-token", "content-type": "application/json", "x-forwarded-for": `${CLIENT_A}` },
        body: "{}",
      });
      expect(response.status).toBe(403);
    }
    const fromB = await fetch(new URL("/mail.v1.AdminService/ListCompanies", h.app.operatorUrl), {
      method: "POST",
      headers: { authorization: "Bearer not-the-operator-token", "content-type": "application/json", "x-forwarded-for": CLIENT_B },
      body: "{}",
    });
    expect(fromB.status).toBe(429);
  });
});
