import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "../../src/contract/api-error.ts";
import { errorCode, openWebhooksHarness, type WebhooksHarness } from "./harness.ts";

/**
 * From the webhook_event outbox to deliveries (fan-out), the relay's work
 * lists, the deliveries list and the manual retry, on PostgreSQL.
 */
let h: WebhooksHarness;

beforeAll(async () => {
  h = await openWebhooksHarness();
});

afterAll(async () => {
  await h?.close();
});

async function endpoint(companyId: string, events: string[], enabled = true): Promise<string> {
  const { endpoint: created } = await h.webhooks.endpoints.create({ companyId, url: "https://hooks.example.com/x", events, enabled });
  return created.id;
}

async function deliveriesOf(eventId: string): Promise<string[]> {
  const { rows } = await h.db.query<{ endpoint_id: string }>(`select endpoint_id from webhook_delivery where event_id = $1 order by endpoint_id`, [
    eventId,
  ]);
  return rows.map((r) => r.endpoint_id);
}

/** Runs fan-out until the outbox is empty. */
async function drain(): Promise<void> {
  while ((await h.outbox.fanOut(100)) > 0);
}

describe("fan-out", () => {
  it("makes one delivery per enabled endpoint of the event's company subscribed to the event", async () => {
    const company = await h.newCompany();
    const other = await h.newCompany();
    const subscribed = await endpoint(company, ["delivered", "bounced"]);
    const alsoSubscribed = await endpoint(company, ["delivered"]);
    await endpoint(company, ["bounced"]);
    await endpoint(company, ["delivered"], false);
    await endpoint(other, ["delivered"]);

    const eventId = await h.recordEvent(company, "delivered", { messageId: "m-1" });
    await drain();
    expect(await deliveriesOf(eventId)).toEqual([subscribed, alsoSubscribed].sort());

    const { rows } = await h.db.query(`select * from webhook_delivery where event_id = $1`, [eventId]);
    for (const row of rows) {
      expect(row).toMatchObject({ company_id: company, event: "delivered", state: "pending", attempt_count: 0, workflow_started_at: null });
    }
    const fanned = await h.db.query(`select fanned_out_at from webhook_event where id = $1`, [eventId]);
    expect(fanned.rows[0]?.fanned_out_at).not.toBeNull();
  });

  it("gives an endpoint only the events recorded after it was created", async () => {
    const company = await h.newCompany();
    const before = await h.recordEvent(company, "sent");
    const late = await endpoint(company, ["sent"]);
    const after = await h.recordEvent(company, "sent");
    await drain();
    expect(await deliveriesOf(before)).toEqual([]);
    expect(await deliveriesOf(after)).toEqual([late]);
  });

  it("never makes a second delivery of an event for an endpoint, however often or concurrently it runs", async () => {
    const company = await h.newCompany();
    const target = await endpoint(company, ["failed"]);
    const events = await Promise.all(Array.from({ length: 40 }, () => h.recordEvent(company, "failed")));
    // Several relays at once, small batches.
    await Promise.all([h.outbox.fanOut(7), h.outbox.fanOut(7), h.outbox.fanOut(7), h.outbox.fanOut(7)]);
    await drain();
    // Forget the fan-out marks, as if the relay had crashed after inserting: a rerun adds nothing.
    await h.db.query(`update webhook_event set fanned_out_at = null where company_id = $1`, [company]);
    await drain();
    const { rows } = await h.db.query<{ n: number; distinct_events: number }>(
      `select count(*)::int as n, count(distinct event_id)::int as distinct_events from webhook_delivery where endpoint_id = $1`,
      [target],
    );
    expect(rows[0]).toEqual({ n: 40, distinct_events: 40 });
    expect(events).toHaveLength(40);
  });

  it("lists deliveries without a workflow for the relay until they are marked started", async () => {
    const company = await h.newCompany();
    const target = await endpoint(company, ["opened"]);
    await h.recordEvent(company, "opened");
    await drain();
    const waiting = (await h.outbox.unstarted(1000, 0)).filter((d) => d.endpointId === target);
    expect(waiting).toHaveLength(1);
    expect(waiting[0]).toMatchObject({ companyId: company, event: "opened", attemptCount: 0, retryRequest: null });
    await h.outbox.markWorkflowStarted(company, waiting[0]?.id ?? "");
    expect((await h.outbox.unstarted(1000, 0)).filter((d) => d.endpointId === target)).toEqual([]);
  });
});

describe("the deliveries list", () => {
  let company: string;
  let first: string;
  let second: string;
  const ids: string[] = [];

  beforeAll(async () => {
    company = await h.newCompany();
    first = await endpoint(company, ["sent", "delivered"]);
    second = await endpoint(company, ["delivered"]);
    for (let i = 0; i < 6; i++) {
      await h.recordEvent(company, i % 2 === 0 ? "sent" : "delivered", { n: i }, new Date(Date.UTC(2025, 10, 20, 10, i)));
      await drain();
    }
    const { rows } = await h.db.query<{ id: string }>(
      `select id from webhook_delivery where company_id = $1 order by created_at desc, id desc`,
      [company],
    );
    ids.push(...rows.map((r) => r.id));
  });

  it("pages newest first through opaque cursors until nextCursor is null", async () => {
    expect(ids).toHaveLength(9);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await h.webhooks.deliveries.list({ companyId: company, limit: 4, cursor });
      seen.push(...page.items.map((d) => d.id));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual(ids);
  });

  it("filters by endpoint, state, event and time", async () => {
    const byEndpoint = await h.webhooks.deliveries.list({ companyId: company, endpointId: second, limit: 100 });
    expect(byEndpoint.items.map((d) => d.endpointId)).toEqual([second, second, second]);
    const sent = await h.webhooks.deliveries.list({ companyId: company, event: "sent" });
    expect(sent.items.map((d) => [d.event, d.endpointId])).toEqual([
      ["sent", first],
      ["sent", first],
      ["sent", first],
    ]);
    await h.db.query(`update webhook_delivery set state = 'dead_letter' where id = $1`, [ids[0]]);
    const dead = await h.webhooks.deliveries.list({ companyId: company, state: "dead_letter" });
    expect(dead.items.map((d) => d.id)).toEqual([ids[0]]);

    const { rows } = await h.db.query<{ created_at: Date }>(`select created_at from webhook_delivery where id = $1`, [ids[4]]);
    const cut = rows[0]?.created_at as Date;
    const newer = await h.webhooks.deliveries.list({ companyId: company, since: cut, limit: 100 });
    const older = await h.webhooks.deliveries.list({ companyId: company, until: cut, limit: 100 });
    expect(newer.items.length + older.items.length).toBe(9);
    expect(newer.items.map((d) => d.id)).toContain(ids[4]);
    expect(older.items.map((d) => d.id)).not.toContain(ids[4]);
  });

  it("shows nothing of other companies and refuses their cursors and other filters' cursors", async () => {
    const stranger = await h.newCompany();
    expect((await h.webhooks.deliveries.list({ companyId: stranger })).items).toEqual([]);
    expect(await errorCode(h.webhooks.deliveries.get({ companyId: stranger, deliveryId: ids[0] ?? "" }))).toBe("NOT_FOUND");
    const page = await h.webhooks.deliveries.list({ companyId: company, limit: 2 });
    const cursor = page.nextCursor ?? "";
    expect(await errorCode(h.webhooks.deliveries.list({ companyId: stranger, limit: 2, cursor }))).toBe("VALIDATION_ERROR");
    expect(await errorCode(h.webhooks.deliveries.list({ companyId: company, limit: 2, cursor, event: "sent" }))).toBe("VALIDATION_ERROR");
    expect(await errorCode(h.webhooks.deliveries.list({ companyId: company, limit: 2, cursor: `${cursor.slice(0, -2)}AA` }))).toBe("VALIDATION_ERROR");
  });

  it("validates limit, event names and the time range", async () => {
    for (const query of [{ limit: 0 }, { limit: 101 }, { event: "nope" }, { since: new Date(2000), until: new Date(1000) }]) {
      const error = await h.webhooks.deliveries.list({ companyId: company, ...query }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ValidationError);
    }
  });
});

describe("manual retry", () => {
  it("retries only a dead letter: it goes back to attempting with a retry request for the relay", async () => {
    const company = await h.newCompany();
    const target = await endpoint(company, ["complaint"]);
    await h.recordEvent(company, "complaint");
    await drain();
    const [delivery] = (await h.webhooks.deliveries.list({ companyId: company })).items;
    if (!delivery) throw new Error("no delivery");

    const refused = await h.webhooks.deliveries.retry({ companyId: company, deliveryId: delivery.id }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ValidationError);
    expect((refused as ValidationError).message).toContain("pending");

    await h.db.query(`update webhook_delivery set state = 'dead_letter', attempt_count = 5 where id = $1`, [delivery.id]);
    const nudgesBefore = h.nudges.count;
    const retried = await h.webhooks.deliveries.retry({ companyId: company, deliveryId: delivery.id });
    expect(retried).toMatchObject({ id: delivery.id, state: "attempting", attemptCount: 5 });
    expect(h.nudges.count).toBe(nudgesBefore + 1);

    const requests = (await h.outbox.retryRequests(1000)).filter((d) => d.id === delivery.id);
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ endpointId: target, attemptCount: 5 });
    expect(requests[0]?.retryRequest).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    // Asking twice is refused: it is no dead letter any more.
    expect(await errorCode(h.webhooks.deliveries.retry({ companyId: company, deliveryId: delivery.id }))).toBe("VALIDATION_ERROR");

    await h.outbox.clearRetryRequest(company, delivery.id, requests[0]?.retryRequest ?? "");
    expect((await h.outbox.retryRequests(1000)).filter((d) => d.id === delivery.id)).toEqual([]);
    expect(await errorCode(h.webhooks.deliveries.retry({ companyId: await h.newCompany(), deliveryId: delivery.id }))).toBe("NOT_FOUND");
  });

  it("retries every dead letter of one endpoint created since a time, and nothing else", async () => {
    const company = await h.newCompany();
    const target = await endpoint(company, ["clicked"]);
    const bystander = await endpoint(company, ["clicked"]);
    for (let i = 0; i < 3; i++) await h.recordEvent(company, "clicked");
    await drain();
    await h.db.query(`update webhook_delivery set state = 'dead_letter' where company_id = $1`, [company]);
    const { rows } = await h.db.query<{ id: string }>(
      `select id from webhook_delivery where endpoint_id = $1 order by created_at, id`,
      [target],
    );
    // One of them older than the cut.
    await h.db.query(`update webhook_delivery set created_at = now() - interval '2 days' where id = $1`, [rows[0]?.id]);

    const since = new Date(Date.now() - 24 * 3_600_000);
    expect(await h.webhooks.deliveries.retryDeadLetters({ companyId: company, endpointId: target, since })).toEqual({ retried: 2, deadLetters: 2 });
    const states = await h.db.query<{ endpoint_id: string; state: string; n: number }>(
      `select endpoint_id, state, count(*)::int as n from webhook_delivery where company_id = $1 group by 1, 2 order by 1, 2`,
      [company],
    );
    expect(states.rows).toEqual(
      expect.arrayContaining([
        { endpoint_id: target, state: "attempting", n: 2 },
        { endpoint_id: target, state: "dead_letter", n: 1 },
        { endpoint_id: bystander, state: "dead_letter", n: 3 },
      ]),
    );
    expect(await h.webhooks.deliveries.retryDeadLetters({ companyId: company, endpointId: target, since })).toEqual({ retried: 0, deadLetters: 0 });
    expect(await errorCode(h.webhooks.deliveries.retryDeadLetters({ companyId: await h.newCompany(), endpointId: target, since }))).toBe("NOT_FOUND");
    expect(await errorCode(h.webhooks.deliveries.retryDeadLetters({ companyId: company, endpointId: target, since: undefined }))).toBe("VALIDATION_ERROR");
  });
});
