import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Form } from "../../src/gen/mail/v1/mail_pb.js";
import type { ReadySender, SendingHarness } from "../support/sending-harness.ts";
import { createDoubleOptInForm, startFormsHarnessWith } from "../support/forms.ts";
import { messageBody } from "../support/message-bodies.ts";

/**
 * Issue 18 item 1, played over real HTTP against a real API process with
 * its worker, PostgreSQL and a Temporal dev server (sending through the
 * simulator): the anonymous sign-up door under a storm.
 *
 * The API trusts X-Forwarded-For here (TRUST_PROXY=true, as behind a load
 * balancer), so each test is a client address of its own.
 */

const PER_CLIENT = 5;
const CONFIRMATIONS_PER_HOUR = 3;

/** Waits while the clock is within a few seconds of a minute's end (the rate limits' windows are minutes). */
async function awayFromMinuteEdge(marginMs = 8_000): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 200));
}

describe("a sign-up storm on the hosted form", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await startFormsHarnessWith({
      trustProxy: true,
      signupLimits: { perClientPerMinute: PER_CLIENT, perFormPerMinute: 1_000, perCompanyPerMinute: 1_000 },
      confirmationsPerCompanyPerHour: CONFIRMATIONS_PER_HOUR,
      // A slow provider: 2 messages a second, no burst (the fairness test counts turns).
      sendingRatePerSecond: 2,
      sendingBurst: 1,
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  async function pageToken(form: Form, client: string): Promise<string> {
    const page = await fetch(form.url, { headers: { "x-forwarded-for": client } });
    const token = /name="_token" value="([^"]+)"/.exec(await page.text())?.[1];
    if (!token) throw new Error("no token on the hosted page");
    return token;
  }

  function post(form: Form, client: string, fields: Record<string, string>): Promise<Response> {
    return fetch(form.url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": client },
      body: new URLSearchParams({ _website: "", ...fields }).toString(),
    });
  }

  const confirmationsOf = async (companyId: string): Promise<number> => {
    const { rows } = await h.db.query<{ n: number }>(
      `select count(*)::int as n from message where company_id = $1 and tags->>'mail_kind' = 'signup-confirmation'`,
      [companyId],
    );
    return rows[0]?.n ?? 0;
  };

  it("takes one token once: replaying it for 10 new addresses writes nothing and sends nothing", async () => {
    const shop = await h.readySender();
    const form = await createDoubleOptInForm(h, shop.companyId);
    const token = await pageToken(form, "198.51.100.1");
    expect((await post(form, "198.51.100.1", { _token: token, email: "first@example.com" })).status).toBe(200);
    for (let i = 0; i < 10; i++) {
      // Each replay from another address, so only the token's single use can refuse it.
      const replay = await post(form, `198.51.100.${10 + i}`, { _token: token, email: `replay${i}@example.com` });
      expect(replay.status).toBe(403);
      expect(replay.headers.get("content-type")).toBe("text/html; charset=utf-8");
    }
    const { rows } = await h.db.query<{ n: number }>(`select count(*)::int as n from contact where company_id = $1`, [shop.companyId]);
    expect(rows[0]?.n).toBe(1);
    expect(await confirmationsOf(shop.companyId)).toBe(1);
  });

  it("slows a storm from one client to its budget, then refuses it with a clear page, 429 and retry-after, never a 500", async () => {
    await awayFromMinuteEdge();
    const shop = await h.readySender();
    const form = await createDoubleOptInForm(h, shop.companyId);
    const client = "198.51.100.50";
    const statuses: number[] = [];
    for (let i = 0; i < PER_CLIENT + 4; i++) {
      const answer = await post(form, client, { _token: await pageToken(form, client), email: `storm${i}@example.com` });
      statuses.push(answer.status);
      expect(answer.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const body = await answer.text();
      if (answer.status === 429) {
        expect(Number(answer.headers.get("retry-after"))).toBeGreaterThan(0);
        expect(body).toContain('role="alert"');
        expect(body).toContain("Too many sign-ups right now. Please try again in a minute.");
      }
    }
    expect(statuses).toEqual([...Array<number>(PER_CLIENT).fill(200), 429, 429, 429, 429]);
    // Another visitor of the same form is not refused.
    expect((await post(form, "198.51.100.51", { _token: await pageToken(form, "198.51.100.51"), email: "calm@example.com" })).status).toBe(200);
  });

  it("caps the company's confirmation emails per hour: over the cap the contact stays pending, no email, no credit, the same page", async () => {
    const shop: ReadySender = await h.readySender({ credits: 50 });
    const form = await createDoubleOptInForm(h, shop.companyId);
    const pages: string[] = [];
    for (let i = 0; i < CONFIRMATIONS_PER_HOUR + 3; i++) {
      const client = `198.51.100.${100 + i}`;
      const answer = await post(form, client, { _token: await pageToken(form, client), email: `capped${i}@example.com`, firstName: "Visit https://evil.example now" });
      expect(answer.status).toBe(200);
      pages.push(await answer.text());
    }
    expect(new Set(pages).size).toBe(1);
    const { rows: contacts } = await h.db.query<{ status: string }>(`select status from contact where company_id = $1`, [shop.companyId]);
    expect(contacts.map((c) => c.status)).toEqual(Array<string>(CONFIRMATIONS_PER_HOUR + 3).fill("pending"));
    expect(await confirmationsOf(shop.companyId)).toBe(CONFIRMATIONS_PER_HOUR);

    // The emails that went are delivered and paid (one credit each); nothing the visitor typed is in them.
    const { rows: sent } = await h.db.query<{ id: string }>(
      `select id from message where company_id = $1 and tags->>'mail_kind' = 'signup-confirmation'`,
      [shop.companyId],
    );
    for (const message of sent) {
      await h.waitForMessage(shop.secret, message.id, (m) => m.status === "delivered", 45_000);
      const { html, text } = await messageBody(h.app, shop.companyId, message.id);
      expect(html).not.toContain("evil.example");
      expect(text).not.toContain("evil.example");
    }
    const { rows: wallet } = await h.db.query<{ balance: string }>(`select balance from credit_wallet where company_id = $1`, [shop.companyId]);
    expect(Number(wallet[0]?.balance)).toBe(50 - CONFIRMATIONS_PER_HOUR);
  });

  it("keeps the sending pace fair: one company's burst delays another's message by about one pace interval, not the whole burst", async () => {
    const burst = await h.readySender({ credits: 100 });
    const other = await h.readySender({ credits: 10 });
    const send = async (shop: ReadySender, to: string): Promise<string> => {
      const answer = await h.send(shop.secret, { to, subject: "Receipt", html: "<p>Thanks</p>" });
      expect(answer.status).toBe(202);
      return ((await answer.json()) as { id: string }).id;
    };
    const burstIds = await Promise.all(Array.from({ length: 24 }, (_, i) => send(burst, `buyer${i}@example.com`)));
    // Let the burst's workflows start and queue on the pace: a few of them handed off, the rest waiting.
    const handedOff = async (): Promise<number> =>
      (await h.db.query<{ n: number }>(`select count(*)::int as n from simulator_handoff s join message m on m.id = s.message_id where m.company_id = $1`, [burst.companyId])).rows[0]?.n ?? 0;
    while ((await handedOff()) < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    const otherId = await send(other, "customer@example.com");
    await h.waitForMessage(other.secret, otherId, (m) => m.status === "delivered" || m.status === "sent", 45_000);
    // From the moment the other company's message had to wait for the pace (its `deferred` event; none if it never waited)
    // to its handoff, the burst gets at most the slot it had already taken: the next slot is the other company's.
    const { rows } = await h.db.query<{ n: number }>(
      `with other as (
         select coalesce((select min(at) from message_event where message_id = $2 and type = 'deferred'), s.created_at) as waited_at,
                s.created_at as handed_off_at
           from simulator_handoff s where s.message_id = $2)
       select count(s.message_id)::int as n
         from other join simulator_handoff s on s.created_at > other.waited_at and s.created_at < other.handed_off_at
         join message m on m.id = s.message_id and m.company_id = $1`,
      [burst.companyId, otherId],
    );
    expect(rows[0]?.n).toBeLessThanOrEqual(1);
    for (const id of burstIds) await h.waitForMessage(burst.secret, id, (m) => m.status === "delivered" || m.status === "sent", 60_000);
  });
});
