import { Code, type ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatsInterval, StatsService } from "../../src/gen/mail/v1/stats_pb.js";
import { SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { bearer } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type Browser, signedIn } from "./members-support.ts";

/**
 * The sending statistics (StatsService: GET /mail/v1/stats and
 * /mail/v1/stats/leaders) after real sends through the delivery loop (a
 * Temporal dev server, a worker, the simulator's magic addresses): the
 * counts are those of the outcomes the messages reached, per company, per
 * tag key and per template; over REST, gRPC and the session door; another
 * company's numbers never show; bad bounds answer 400 naming the field.
 */

interface CountsJson {
  accepted: string;
  sent: string;
  delivered: string;
  bounced: string;
  complained: string;
  rejected: string;
  failed: string;
  suppressed: string;
  deferred: string;
  bounceRate: number | null;
  complaintRate: number | null;
}

interface StatsJson {
  buckets: { start: string; counts: CountsJson }[];
  totals: CountsJson;
  since: string;
  until: string;
  interval: string;
}

interface LeadersJson {
  tagsByVolume: { key: string; counts: CountsJson }[];
  tagsByBounceRate: { key: string; counts: CountsJson }[];
  templatesByVolume: { key: string; counts: CountsJson }[];
  templatesByBounceRate: { key: string; counts: CountsJson }[];
}

interface ErrorJson {
  error: { code: string; message: string };
}

/** The counts without the pace's deferrals (how often the pace holds a message back is not this test's business). */
function outcomes(counts: CountsJson): Omit<CountsJson, "deferred"> {
  const { deferred: _deferred, ...rest } = counts;
  return rest;
}

const ZERO = { accepted: "0", sent: "0", delivered: "0", bounced: "0", complained: "0", rejected: "0", failed: "0", suppressed: "0" };

describe("the sending statistics (StatsService, /mail/v1/stats)", () => {
  let temporal: TemporalDevServer;
  let h: SendingHarness;
  let s: ReadySender;
  let other: ReadySender;
  let member: Browser;
  let templateId: string;
  let otherTemplateId: string;
  const started = new Date();

  async function send(sender: ReadySender, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
    const response = await h.send(sender.secret, { subject: "Your receipt", html: "<p>Thanks</p>", ...body }, headers);
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  async function stats(query: string, secret = s.secret): Promise<StatsJson> {
    const response = await h.fetch(`/mail/v1/stats?${query}`, bearer(secret));
    expect(response.status, query).toBe(200);
    return (await response.json()) as StatsJson;
  }

  beforeAll(async () => {
    temporal = await startTemporalDevServer();
    h = await startSendingHarness({ trustProxy: true }, temporal);
    s = await h.readySender({ credits: 20 });
    other = await h.readySender({ credits: 20 });
    member = await signedIn(h, s.companyId, "member@stats.example", "member");
    templateId = (await h.forCompany(TemplatesService, s.companyId).putTemplate({ name: "receipt", subject: "Receipt {{order}}", html: "<p>{{order}}</p>" })).template?.id ?? "";
    otherTemplateId = (await h.forCompany(TemplatesService, other.companyId).putTemplate({ name: "receipt", subject: "Theirs", html: "<p>x</p>" })).template?.id ?? "";
    await h.forCompany(SuppressionsService, s.companyId).addSuppression({ email: "blocked@customer.example" });

    // The same send twice with one Idempotency-Key: one message, counted once.
    const first = await send(s, { to: "delivered@customer.example", tags: { receipt: "1001" } }, { "idempotency-key": "order-1001" });
    expect(await send(s, { to: "delivered@customer.example", tags: { receipt: "1001" } }, { "idempotency-key": "order-1001" })).toBe(first);
    const waits = [
      [first, "delivered"],
      [await send(s, { to: "delivered+eu@customer.example", tags: { receipt: "1002", eu: "yes" } }), "delivered"],
      [await send(s, { to: "bounce@customer.example", tags: { receipt: "1003" } }), "bounced"],
      [await send(s, { to: "complaint@customer.example", tags: { welcome: "a" } }), "complained"],
      [await send(s, { to: "blocked@customer.example", tags: { welcome: "b" } }), "suppressed"],
      [await send(s, { to: "reject@customer.example" }), "rejected"],
      [await send(s, { to: "delivered+t@customer.example", templateId, variables: { order: "1004" } }), "delivered"],
    ] as const;
    // Another company's mail, all bounced, with the same tag key.
    const theirs = [
      await send(other, { to: "bounce@customer.example", tags: { receipt: "9" } }),
      await send(other, { to: "bounce+2@customer.example", templateId: otherTemplateId }),
    ];
    for (const [id, status] of waits) await h.waitForMessage(s.secret, id, (m) => m.status === status);
    for (const id of theirs) await h.waitForMessage(other.secret, id, (m) => m.status === "bounced");
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await temporal?.stop();
  });

  it("counts what happened to the company's messages, with the rates over the messages handed over", async () => {
    const body = await stats(`interval=hour&since=${new Date(started.getTime() - 3_600_000).toISOString()}`);
    expect(body.interval).toBe("hour");
    expect(outcomes(body.totals)).toEqual({
      accepted: "7",
      // The rejected message was turned away at the handoff, the suppressed one never handed over.
      sent: "5",
      // The complaint's message was delivered first.
      delivered: "4",
      bounced: "1",
      complained: "1",
      rejected: "1",
      failed: "0",
      suppressed: "1",
      bounceRate: 0.2,
      complaintRate: 0.2,
    });
    // Every hour of the range, oldest first, on hour boundaries; the hours add up to the totals.
    expect(body.buckets.length).toBeGreaterThanOrEqual(2);
    for (const bucket of body.buckets) expect(new Date(bucket.start).getTime() % 3_600_000).toBe(0);
    expect(body.buckets.reduce((sum, bucket) => sum + Number(bucket.counts.accepted), 0)).toBe(7);
    const empty = body.buckets.find((bucket) => bucket.counts.accepted === "0");
    expect(empty?.counts).toMatchObject({ ...ZERO, bounceRate: null, complaintRate: null });
  });

  it("by day by default: 30 UTC days to now, today's bucket last", async () => {
    const body = await stats("");
    expect(body.interval).toBe("day");
    expect(body.buckets).toHaveLength(30);
    expect(body.buckets.at(-1)?.start).toBe(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
    expect(Number(body.buckets.at(-1)?.counts.accepted)).toBe(7);
    expect(body.totals.accepted).toBe("7");
  });

  it("filters by tag key (a message with several tags counts under each) and by template", async () => {
    expect(outcomes((await stats("tag=receipt")).totals)).toEqual({
      ...ZERO,
      accepted: "3",
      sent: "3",
      delivered: "2",
      bounced: "1",
      bounceRate: 1 / 3,
      complaintRate: 0,
    });
    expect(outcomes((await stats("tag=eu")).totals)).toMatchObject({ accepted: "1", delivered: "1" });
    expect(outcomes((await stats("tag=welcome")).totals)).toEqual({
      ...ZERO,
      accepted: "2",
      sent: "1",
      delivered: "1",
      complained: "1",
      suppressed: "1",
      bounceRate: 0,
      complaintRate: 1,
    });
    expect(outcomes((await stats(`templateId=${templateId}`)).totals)).toEqual({ ...ZERO, accepted: "1", sent: "1", delivered: "1", bounceRate: 0, complaintRate: 0 });
    expect((await stats("tag=never-used")).totals.accepted).toBe("0");
  });

  it("answers the leading tags and templates, by volume and by bounce rate", async () => {
    const response = await h.fetch("/mail/v1/stats/leaders", bearer(s.secret));
    expect(response.status).toBe(200);
    const body = (await response.json()) as LeadersJson;
    expect(body.tagsByVolume.map((t) => [t.key, t.counts.accepted])).toEqual([
      ["receipt", "3"],
      ["welcome", "2"],
      ["eu", "1"],
    ]);
    // Highest bounce rate first, then most sent, then by name.
    expect(body.tagsByBounceRate.map((t) => [t.key, t.counts.bounceRate])).toEqual([
      ["receipt", 1 / 3],
      ["eu", 0],
      ["welcome", 0],
    ]);
    expect(body.templatesByVolume.map((t) => [t.key, t.counts.accepted])).toEqual([[templateId, "1"]]);
    expect(body.templatesByBounceRate.map((t) => t.key)).toEqual([templateId]);
    // A minimum of messages handed over keeps small tags out of the bounce-rate lists; a limit shortens each list.
    const strict = (await (await h.fetch("/mail/v1/stats/leaders?minSent=2&limit=1", bearer(s.secret))).json()) as LeadersJson;
    expect(strict.tagsByBounceRate.map((t) => t.key)).toEqual(["receipt"]);
    expect(strict.tagsByVolume.map((t) => t.key)).toEqual(["receipt"]);
    expect(strict.templatesByBounceRate).toEqual([]);
  });

  it("the same numbers over gRPC and through the session door, for every role; a key needs mail.events.read", async () => {
    const grpc = await createClient(StatsService, createGrpcTransport({ baseUrl: h.app.grpcUrl })).getStats(
      { interval: StatsInterval.DAY, tag: "receipt" },
      { headers: { authorization: `Bearer ${s.secret}` } },
    );
    expect(grpc.totals).toMatchObject({ accepted: 3n, sent: 3n, bounced: 1n, bounceRate: 1 / 3 });
    const session = await member.call("mail.v1.StatsService", "GetStats", { interval: "STATS_INTERVAL_HOUR", tag: "welcome" });
    expect(session.status).toBe(200);
    expect((session.body.totals as CountsJson).complained).toBe("1");
    const leaders = await member.call("mail.v1.StatsService", "GetStatsLeaders", {});
    expect(leaders.status).toBe(200);
    const admin = await signedIn(h, s.companyId, "admin@stats.example", "admin");
    expect((await admin.call("mail.v1.StatsService", "GetStats", {})).status).toBe(200);

    const sendOnly = await h.newKey(s.companyId, ["mail.transactional.send"], "sender");
    for (const url of ["/mail/v1/stats", "/mail/v1/stats/leaders"]) {
      const refused = await h.fetch(url, bearer(sendOnly.secret));
      expect(refused.status, url).toBe(403);
      expect(((await refused.json()) as ErrorJson).error.code).toBe("FORBIDDEN");
    }
    const error = await createClient(StatsService, createGrpcTransport({ baseUrl: h.app.grpcUrl }))
      .getStats({}, { headers: { authorization: `Bearer ${sendOnly.secret}` } })
      .catch((e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.PermissionDenied);
    expect((await h.fetch("/mail/v1/stats")).status).toBe(401);
    // Reads only: nothing else lives under /mail/v1/stats.
    expect((await h.fetch("/mail/v1/stats", { method: "POST", headers: { authorization: `Bearer ${s.secret}`, "content-type": "application/json" }, body: "{}" })).status).toBe(404);
    expect((await h.fetch("/mail/v1/stats/everything", bearer(s.secret))).status).toBe(404);
  });

  it("every company reads its own numbers only: another's template id or tag shows nothing", async () => {
    const theirs = await stats("", other.secret);
    expect(outcomes(theirs.totals)).toMatchObject({ accepted: "2", sent: "2", bounced: "2", bounceRate: 1 });
    // The same tag key in both companies: each sees its own messages.
    expect((await stats("tag=receipt", other.secret)).totals.accepted).toBe("1");
    expect((await stats(`templateId=${otherTemplateId}`)).totals).toMatchObject({ ...ZERO, bounceRate: null });
    expect((await stats(`templateId=${templateId}`, other.secret)).totals.accepted).toBe("0");
    const leaders = (await (await h.fetch("/mail/v1/stats/leaders", bearer(other.secret))).json()) as LeadersJson;
    expect(leaders.templatesByVolume.map((t) => t.key)).toEqual([otherTemplateId]);
    expect(leaders.tagsByVolume.map((t) => t.key)).toEqual(["receipt"]);
  });

  it("bad bounds and filters answer 400 VALIDATION_ERROR naming the field", async () => {
    const now = Date.now();
    const iso = (offsetDays: number) => new Date(now + offsetDays * 86_400_000).toISOString();
    for (const [query, field] of [
      [`since=${iso(-1)}&until=${iso(-2)}`, "since"],
      [`since=${iso(-1)}&until=${iso(-1)}`, "since"],
      [`interval=hour&since=${iso(-40)}`, "until"],
      [`since=${iso(-500)}`, "until"],
      ["interval=week", "interval"],
      ["since=yesterday", "since"],
      ["templateId=not-a-uuid", "templateId"],
      [`tag=${"x".repeat(41)}`, "tag"],
      [`tag=a&templateId=${templateId}`, "templateId"],
    ] as const) {
      const response = await h.fetch(`/mail/v1/stats?${query}`, bearer(s.secret));
      expect(response.status, query).toBe(400);
      const error = ((await response.json()) as ErrorJson).error;
      expect(error.code, query).toBe("VALIDATION_ERROR");
      expect(error.message, query).toMatch(new RegExp(`^${field}: `));
    }
    for (const [query, field] of [
      ["limit=0", "limit"],
      ["limit=21", "limit"],
      ["minSent=0", "minSent"],
      [`since=${iso(-401)}`, "until"],
    ] as const) {
      const response = await h.fetch(`/mail/v1/stats/leaders?${query}`, bearer(s.secret));
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as ErrorJson).error.message, query).toMatch(new RegExp(`^${field}: `));
    }
  });
});
