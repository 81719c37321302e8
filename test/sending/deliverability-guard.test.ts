import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { SendingStatusService } from "../../src/gen/mail/v1/sending_status_pb.js";
import { bearer, operatorClient } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type Browser, signedIn } from "../api/members-support.ts";
import { loopbackDelivery, type RoutedReceiver, startRoutedReceiver, verifiedBody } from "../webhooks/api-support.ts";

/**
 * The deliverability guard end to end (a real Temporal dev server and
 * worker, the simulator's magic addresses): 200 delivered sends, then
 * bounces until the bounce rate of the last 24 hours passes 5 %; the
 * company is suspended at the bounce that crosses the line; its next send
 * is accepted (202) and ends `failed` SENDING_SUSPENDED with its credit
 * back and a `failed` webhook at a real HTTPS receiver; the owners are
 * emailed once (the system sender company's log, through the simulator);
 * an operator lifts it with mailctl, and sends go out again, the old
 * bounces no longer counting. Both changes are in the audit log.
 */

const SYSTEM_COMPANY = "5e5e5e5e-0000-4000-8000-0000000000d7";

interface StatusJson {
  maySend: boolean;
  suspension: null | {
    suspendedAt: string;
    reason: string;
    window: { sends: string; bounces: string; complaints: string; bounceRate: number; complaintRate: number; from: string };
  };
  window: { sends: string; bounces: string; complaints: string; bounceRate: number; complaintRate: number; from: string };
  limits: { bouncePercent: number; complaintPercent: number; minSends: string };
  liftedAt: string | null;
}

describe("the deliverability guard through the delivery loop", { timeout: 600_000 }, () => {
  let temporal: TemporalDevServer;
  let hooks: RoutedReceiver;
  let h: SendingHarness;
  let s: ReadySender;
  let owner: Browser;
  let hookSecret: string;
  const cli = mailctlAgainst(() => h.app.operatorUrl);

  beforeAll(async () => {
    temporal = await startTemporalDevServer();
    hooks = await startRoutedReceiver();
    h = await startSendingHarness(
      { trustProxy: true, systemSenderCompanyId: SYSTEM_COMPANY, publicBaseUrl: "https://mail.example.test" },
      temporal,
      { webhookDelivery: loopbackDelivery(hooks.certificate) },
    );
    await h.db.query(`insert into company (id, name) values ($1, 'System')`, [SYSTEM_COMPANY]);
    const domain = await h.admin.createSendingDomain({ companyId: SYSTEM_COMPANY, domain: "system-guard.example" });
    await h.admin.verifySendingDomain({ companyId: SYSTEM_COMPANY, domainId: domain.domain?.id ?? "", override: true });
    await h.admin.createSender({ companyId: SYSTEM_COMPANY, email: "no-reply@system-guard.example", makeDefault: true });
    await h.admin.adjustCredits({ companyId: SYSTEM_COMPANY, amount: 100n, note: "owner notices" });

    s = await h.readySender({ credits: 300, scopes: ["mail.transactional.send", "mail.events.read", "mail.admin"] });
    await h.db.query(`update company set name = 'Bouncy Shop' where id = $1`, [s.companyId]);
    owner = await signedIn(h, s.companyId, "first-owner@guard.example", "owner");
    await signedIn(h, s.companyId, "second-owner@guard.example", "owner");
    await signedIn(h, s.companyId, "admin@guard.example", "admin");
    const endpoint = await h.fetch("/mail/v1/webhooks", {
      method: "POST",
      headers: { authorization: `Bearer ${s.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ url: hooks.urlFor("/failed"), events: ["failed"] }),
    });
    expect(endpoint.status).toBe(201);
    hookSecret = ((await endpoint.json()) as { secret: string }).secret;
  }, 180_000);
  afterAll(async () => {
    await h?.close();
    await hooks?.close();
    await temporal?.stop();
  });

  async function send(to: string): Promise<string> {
    const response = await h.send(s.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>" });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  }

  async function status(): Promise<StatusJson> {
    const response = await h.fetch("/mail/v1/sending-status", bearer(s.secret));
    expect(response.status).toBe(200);
    return (await response.json()) as StatusJson;
  }

  async function balance(): Promise<string> {
    return ((await (await h.fetch("/mail/v1/credits", bearer(s.secret))).json()) as { balance: string }).balance;
  }

  const notices = async () =>
    (
      await h.db.query<{ recipient: string; subject: string; status: string }>(
        `select recipient, subject, status from message where company_id = $1 and tags->>'notice' = 'sending_suspended' order by recipient`,
        [SYSTEM_COMPANY],
      )
    ).rows;

  let firstDelivered = "";

  it("200 delivered sends: judged, not suspended; the window shows them", async () => {
    const before = await status();
    expect(before).toMatchObject({ maySend: true, suspension: null, liftedAt: null, limits: { bouncePercent: 5, complaintPercent: 0.3, minSends: "200" } });
    for (let batch = 0; batch < 8; batch += 1) {
      const ids = await Promise.all(Array.from({ length: 25 }, (_, n) => send(`delivered+${batch * 25 + n}@customer.example`)));
      if (batch === 0) firstDelivered = ids[0] ?? "";
    }
    await expect.poll(async () => (await status()).window.sends, { timeout: 120_000, interval: 500 }).toBe("200");
    // Ten bounces: 10 of 210 is 4.76 %, under the line.
    for (let n = 0; n < 10; n += 1) {
      const id = await send(`bounce+${n}@customer.example`);
      await h.waitForMessage(s.secret, id, (m) => m.status === "bounced");
    }
    const judged = await status();
    expect(judged).toMatchObject({ maySend: true, suspension: null, window: { sends: "210", bounces: "10", complaints: "0" } });
    expect(judged.window.bounceRate).toBeCloseTo(4.76, 2);
  });

  it("the bounce that takes the rate past 5 % suspends sending; the screen's read says why with the numbers", async () => {
    const id = await send("bounce+10@customer.example");
    await h.waitForMessage(s.secret, id, (m) => m.status === "bounced");
    await expect.poll(async () => (await status()).maySend, { timeout: 15_000 }).toBe(false);
    const suspended = await status();
    expect(suspended.suspension).toMatchObject({ reason: "bounce_rate", window: { sends: "211", bounces: "11", complaints: "0" } });
    expect(suspended.suspension?.window.bounceRate).toBeCloseTo(5.21, 2);

    // Every member reads it through the session door, and gRPC callers the same message.
    const read = await owner.call("mail.v1.SendingStatusService", "GetSendingStatus", {});
    expect(read.status).toBe(200);
    // The Connect JSON form leaves out a false field.
    expect(read.body.maySend ?? false).toBe(false);
    expect(read.body).toMatchObject({ suspension: { reason: "SUSPENSION_REASON_BOUNCE_RATE", window: { sends: "211", bounces: "11" } } });
    const grpc = await operatorClient(h.app.operatorUrl, SendingStatusService, s.companyId).getSendingStatus({});
    expect(grpc.maySend).toBe(false);
    expect(grpc.suspension?.window?.bounces).toBe(11n);
  });

  it("a send meanwhile is accepted, then fails SENDING_SUSPENDED with its credit back and a `failed` webhook", async () => {
    const credits = await balance();
    const id = await send("delivered+after@customer.example");
    const failed = await h.waitForMessage(s.secret, id, (m) => m.status === "failed");
    expect(failed.errorCode).toBe("SENDING_SUSPENDED");
    expect(failed.sentAt).toBeNull();
    expect(await balance()).toBe(credits);

    const deliveries = await hooks.waitOn("/failed", 1);
    const bodies = deliveries.map((request) => verifiedBody(request, hookSecret));
    expect(bodies.find((body) => body.data.messageId === id)).toMatchObject({ event: "failed", data: { messageId: id, error: "SENDING_SUSPENDED" } });
  });

  it("the owners are emailed once, with the numbers; a later bounce while suspended emails nobody", async () => {
    await expect.poll(async () => (await notices()).length, { timeout: 30_000 }).toBe(2);
    const sent = await notices();
    expect(sent.map((row) => row.recipient)).toEqual(["first-owner@guard.example", "second-owner@guard.example"]);
    expect(sent.map((row) => row.subject)).toEqual(["Sending is suspended: 5.21 % of your emails bounced", "Sending is suspended: 5.21 % of your emails bounced"]);
    // The notices are system mail of the system company, handed over like any other.
    await expect.poll(async () => (await notices()).map((row) => row.status), { timeout: 30_000 }).toEqual(["delivered", "delivered"]);

    // A late bounce of an earlier delivered message: recorded, judged, nobody emailed again.
    const delivered = await h.waitForMessage(s.secret, firstDelivered, (m) => m.status === "delivered");
    const report = { providerEventId: `late-${firstDelivered}`, providerMessageId: delivered.providerMessageId ?? "", type: "bounced" };
    expect(await h.admin.reportProviderEvent(report)).toMatchObject({ applied: true });
    expect((await status()).window.bounces).toBe("12");
    expect(await notices()).toHaveLength(2);
  });

  it("an operator lifts it with mailctl (audited); sends go out again and the old bounces no longer count", async () => {
    expect(await cli.errorCode(["sending", "lift", "--company", s.companyId, "--reason", " "])).toBe("VALIDATION_ERROR");
    expect(await cli.errorCode(["sending", "lift", "--company", "5e5e5e5e-0000-4000-8000-00000000dead", "--reason", "x"])).toBe("NOT_FOUND");
    expect(await cli.ok(["sending", "lift", "--company", s.companyId, "--reason", "list cleaned, double opt-in on"])).toEqual({ lifted: true });
    expect(await cli.ok(["sending", "lift", "--company", s.companyId, "--reason", "again"])).toEqual({ lifted: false });

    const shown = await cli.ok<StatusJson>(["sending", "status", "--company", s.companyId]);
    expect(shown).toMatchObject({ maySend: true, suspension: null, window: { sends: "0", bounces: "0" } });
    expect(shown.liftedAt).not.toBeNull();

    const id = await send("delivered+lifted@customer.example");
    await h.waitForMessage(s.secret, id, (m) => m.status === "delivered");
    // A bounce right after the lift: 1 of 2 sends, but far under the 200 sends the guard needs.
    const bounce = await send("bounce+lifted@customer.example");
    await h.waitForMessage(s.secret, bounce, (m) => m.status === "bounced");
    expect(await status()).toMatchObject({ maySend: true, window: { sends: "2", bounces: "1" } });

    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { limit: 100 });
    const rows = (audit.body.items as Array<{ action: string; actor: string; actorKind: string; targetId: string; details: string }>).filter((row) =>
      row.action.startsWith("sending."),
    );
    expect(rows.map((row) => [row.action, row.actorKind, row.actor, row.targetId])).toEqual([
      ["sending.suspension_lifted", "AUDIT_ACTOR_KIND_OPERATOR", "operator", s.companyId],
      ["sending.suspended", "AUDIT_ACTOR_KIND_SYSTEM", "sending guard", s.companyId],
    ]);
    expect(JSON.parse(rows[1]?.details ?? "{}")).toMatchObject({ reason: "bounce_rate", sends: 211, bounces: 11, complaints: 0, bounceRate: "5.21" });
    expect(JSON.parse(rows[0]?.details ?? "{}")).toMatchObject({ note: "list cleaned, double opt-in on", reason: "bounce_rate", bounces: 11 });
  });
});
