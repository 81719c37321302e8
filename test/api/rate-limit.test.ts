import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { App } from "../../src/wiring/api.ts";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * The budget is a fixed one-minute window; a test that straddles the turn of
 * a minute would see its count reset. Start clear of the boundary.
 */
async function awayFromMinuteBoundary(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_500 - intoMinute));
}

describe("rate limits per API key", () => {
  let h: ApiHarness;
  let second: App;

  beforeAll(async () => {
    // A small budget so the test stays quick; the default is the spec's 600.
    h = await startApiHarness({ requestsPerMinute: 6 });
    second = await h.startSecondInstance();
  });
  afterAll(async () => h?.close());

  it("holds across two API processes sharing one database, with headers and retry-after", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.events.read"]);
    await awayFromMinuteBoundary();
    const urls = [h.app.httpUrl, second.httpUrl];
    const answers: Response[] = [];
    // Alternate between the two processes: neither alone sees the whole count.
    for (let i = 0; i < 7; i++) answers.push(await fetch(new URL("/mail/v1/me", urls[i % 2]), bearer(secret)));

    const allowed = answers.slice(0, 6);
    for (const [i, response] of allowed.entries()) {
      expect(response.status, `request ${i + 1}`).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("6");
      expect(response.headers.get("x-ratelimit-remaining")).toBe(String(5 - i));
      const reset = Number(response.headers.get("x-ratelimit-reset"));
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(60);
    }

    const refused = answers[6] as Response;
    expect(refused.status).toBe(429);
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    expect(refused.headers.get("x-request-id")).toBeTruthy();
  });

  it("counts each key separately", async () => {
    const a = await h.newCompanyWithKey(["mail.events.read"]);
    const b = await h.newCompanyWithKey(["mail.events.read"]);
    await awayFromMinuteBoundary();
    for (let i = 0; i < 6; i++) expect((await h.fetch("/mail/v1/me", bearer(a.secret))).status).toBe(200);
    expect((await h.fetch("/mail/v1/me", bearer(a.secret))).status).toBe(429);
    expect((await h.fetch("/mail/v1/me", bearer(b.secret))).status).toBe(200);
  });

  it("error answers of an authenticated key carry the rate-limit headers too", async () => {
    const { secret } = await h.newCompanyWithKey(["mail.contacts.read"]);
    const forbidden = await h.fetch("/mail/v1/me", bearer(secret));
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("x-ratelimit-limit")).toBe("6");
    expect(forbidden.headers.get("x-ratelimit-remaining")).toBe("5");
  });
});

describe("the conversions budget", () => {
  let h: ApiHarness;
  afterAll(async () => h?.close());

  it("POST /mail/v1/conversions has its own budget of 300 per minute per key", async () => {
    h = await startApiHarness();
    const { secret } = await h.newCompanyWithKey(["mail.conversions.write", "mail.events.read"]);
    const conversions = await h.fetch("/mail/v1/conversions", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ eventId: "e1" }),
    });
    expect(conversions.headers.get("x-ratelimit-limit")).toBe("300");
    expect(conversions.headers.get("x-ratelimit-remaining")).toBe("299");
    const me = await h.fetch("/mail/v1/me", bearer(secret));
    expect(me.headers.get("x-ratelimit-limit")).toBe("600");
    expect(me.headers.get("x-ratelimit-remaining")).toBe("599");
  });
});
