import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { PostgresTestEventRecorder } from "../../src/adapters/postgres/webhooks/index.ts";
import { LIVE_EVENTS_FEED_APPLICATION_NAME, PostgresLiveEventFeed } from "../../src/adapters/postgres/webhooks/live-event-feed.ts";
import { LiveEvents, type LiveStreamItem, type LiveStreamLimits } from "../../src/capabilities/webhooks/index.ts";
import { errorCode, openWebhooksHarness, type WebhooksHarness } from "./harness.ts";

/**
 * The live event streams on the capability and its PostgreSQL feed (real
 * NOTIFY, real advisory locks), with the bounds made small: what a stream
 * carries and in which order, its keep-alives and longest duration, the
 * client that does not read, a lost feed connection, a closing process.
 * The service-level behaviour (mailctl listen, two API processes) is in
 * listen.test.ts.
 */
let h: WebhooksHarness;
const feeds: PostgresLiveEventFeed[] = [];

beforeAll(async () => {
  h = await openWebhooksHarness();
});

afterEach(async () => {
  for (const feed of feeds.splice(0)) await feed.close();
});

afterAll(async () => {
  await h?.close();
});

function liveEvents(limits: Partial<LiveStreamLimits> = {}): { live: LiveEvents; feed: PostgresLiveEventFeed } {
  const feed = new PostgresLiveEventFeed({ db: h.pool, log: { warn: () => {} } });
  feeds.push(feed);
  return { live: new LiveEvents({ feed, recorder: new PostgresTestEventRecorder(h.pool), limits }), feed };
}

/** The next item of a stream (the stream must not have ended). */
async function next(stream: AsyncGenerator<LiveStreamItem>): Promise<LiveStreamItem> {
  const item = await stream.next();
  if (item.done) throw new Error("the stream ended");
  return item.value;
}

async function rest(stream: AsyncGenerator<LiveStreamItem>): Promise<LiveStreamItem[]> {
  const items: LiveStreamItem[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

describe("a live event stream", () => {
  it("carries the company's events of the kinds asked for, in commit order, with their outbox ids and delivery bodies", async () => {
    const { live } = liveEvents();
    const company = await h.newCompany();
    const other = await h.newCompany();
    const stream = live.stream({ companyId: company, events: ["sent", "delivered", "sent"] });
    expect(await next(stream)).toMatchObject({ kind: "ready", events: ["sent", "delivered"], keepAliveSeconds: 25 });

    const sent = await h.recordEvent(company, "sent", { messageId: "m-1", email: "ada@example.com" }, new Date("2026-01-02T03:04:05.678Z"));
    await h.recordEvent(company, "opened");
    await h.recordEvent(other, "sent");
    const delivered = await h.recordEvent(company, "delivered");
    // A batch in one statement: several notices (100 ids each), every row once.
    const pool = await h.pool();
    const batch = await pool.query<{ id: string }>(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       select $1, 'delivered', now(), '{}'::jsonb, 'batch:' || gen_random_uuid() from generate_series(1, 250)
       returning id`,
      [company],
    );

    const first = await next(stream);
    expect(first).toEqual({
      kind: "event",
      id: sent,
      event: "sent",
      occurredAt: new Date("2026-01-02T03:04:05.678Z"),
      // `data` as jsonb gives it back (keys by length), exactly as a delivery of the event carries it.
      body: JSON.stringify({ id: sent, event: "sent", occurredAt: "2026-01-02T03:04:05.678Z", data: { email: "ada@example.com", messageId: "m-1" } }),
    });
    expect(await next(stream)).toMatchObject({ kind: "event", id: delivered, event: "delivered" });
    const batchIds: string[] = [];
    while (batchIds.length < 250) {
      const item = await next(stream);
      if (item.kind === "event") batchIds.push(item.id);
    }
    expect(batchIds.sort()).toEqual(batch.rows.map((row) => row.id).sort());
    await stream.return();
  });

  it("refuses kinds that are not event names, naming the field", async () => {
    const { live } = liveEvents();
    expect(await errorCode(live.stream({ companyId: await h.newCompany(), events: ["sent", "sent.typo"] }).next())).toBe("VALIDATION_ERROR");
  });

  it("says it is alive in the quiet and ends at its longest duration", async () => {
    const { live } = liveEvents({ keepAliveMs: 100, maxDurationMs: 450 });
    const items = await rest(live.stream({ companyId: await h.newCompany(), events: [] }));
    expect(items[0]?.kind).toBe("ready");
    expect(items.filter((item) => item.kind === "keep_alive").length).toBeGreaterThanOrEqual(1);
    expect(items.at(-1)).toEqual({ kind: "end", reason: "max_duration" });
  });

  it("cuts off a client that does not read, past its backlog (interrupted)", async () => {
    const { live } = liveEvents({ backlog: 10 });
    const company = await h.newCompany();
    const stream = live.stream({ companyId: company, events: [] });
    await next(stream);
    await (await h.pool()).query(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       select $1, 'sent', now(), '{}'::jsonb, 'flood:' || gen_random_uuid() from generate_series(1, 50)`,
      [company],
    );
    expect(await rest(stream)).toEqual([{ kind: "end", reason: "interrupted" }]);
  });
});

describe("the places of a company", () => {
  it("are given back when a client goes away", async () => {
    const { live } = liveEvents({ perCompany: 1 });
    const company = await h.newCompany();
    const gone = new AbortController();
    const first = live.stream({ companyId: company, events: [], signal: gone.signal });
    await next(first);
    expect(await errorCode(live.stream({ companyId: company, events: [] }).next())).toBe("RATE_LIMITED");
    gone.abort();
    expect(await rest(first)).toEqual([]);
    const second = live.stream({ companyId: company, events: [] });
    expect((await next(second)).kind).toBe("ready");
    await second.return();
  });

  it("are counted over every process, and released by PostgreSQL when a process's feed connection dies", async () => {
    const one = liveEvents({ perCompany: 1 });
    const two = liveEvents({ perCompany: 1 });
    const company = await h.newCompany();
    const stream = one.live.stream({ companyId: company, events: [] });
    await next(stream);
    expect(await errorCode(two.live.stream({ companyId: company, events: [] }).next())).toBe("RATE_LIMITED");

    // The first process's feed connection dies (a crash, a network cut): its stream is told, its place is free.
    // (The second process holds no connection: it has no stream.)
    await (await h.pool()).query(
      `select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()`,
      [LIVE_EVENTS_FEED_APPLICATION_NAME],
    );
    expect(await rest(stream)).toEqual([{ kind: "end", reason: "interrupted" }]);
    const taken = two.live.stream({ companyId: company, events: [] });
    expect((await next(taken)).kind).toBe("ready");
    await taken.return();
  });

  it("end as `shutdown` when the process closes, which refuses new streams", async () => {
    const { live, feed } = liveEvents();
    const company = await h.newCompany();
    const stream = live.stream({ companyId: company, events: [] });
    await next(stream);
    await feed.close();
    expect(await rest(stream)).toEqual([{ kind: "end", reason: "shutdown" }]);
    expect(await errorCode(live.stream({ companyId: company, events: [] }).next())).toBe("SERVICE_UNAVAILABLE");
  });
});

describe("a test event", () => {
  it("reaches the company's streams and no endpoint, unless asked to", async () => {
    const { live } = liveEvents();
    const company = await h.newCompany();
    const stream = live.stream({ companyId: company, events: ["clicked"] });
    await next(stream);
    const quiet = await live.trigger({ companyId: company, event: "clicked", endpoints: false });
    const loud = await live.trigger({ companyId: company, event: "clicked", endpoints: true });
    expect(await next(stream)).toMatchObject({ kind: "event", id: quiet.id, event: "clicked" });
    expect(await next(stream)).toMatchObject({ kind: "event", id: loud.id, event: "clicked" });
    await stream.return();
    // Only the second waits for the relay's fan-out (the first is fanned out to nobody already).
    const { rows } = await (await h.pool()).query<{ id: string; waiting: boolean; test: boolean }>(
      `select id, fanned_out_at is null as waiting, (data ->> 'test')::boolean as test from webhook_event where company_id = $1`,
      [company],
    );
    expect(rows.sort((a, b) => Number(a.waiting) - Number(b.waiting))).toEqual([
      { id: quiet.id, waiting: false, test: true },
      { id: loud.id, waiting: true, test: true },
    ]);
    expect(await errorCode(live.trigger({ companyId: company, event: "nope", endpoints: false }))).toBe("VALIDATION_ERROR");
  });
});
