import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { createConnectTransport } from "@connectrpc/connect-node";
import nodemailer from "nodemailer";
import { DeliveryReportsService } from "../../src/gen/mail/v1/delivery_reports_pb.js";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, verifiedBody, loopbackDelivery } from "../webhooks/api-support.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { deliveryReportsConfig, idOnlyReturnPath, type RecipientMx, startRecipientMx } from "./harness.ts";
import { arf, autoReply, dsn } from "./reports.ts";
import { SuppressionReason, SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";

const operator: Interceptor = (next) => (req) => {
  req.header.set("authorization", `Bearer ${OPERATOR_TOKEN}`);
  return next(req);
};

/**
 * The inbound SMTP listener against a real SMTP client (nodemailer): DSNs
 * and ARF reports to VERP return paths move messages once, however often
 * they are posted; forged or cross-company reports change nothing; anything
 * else is kept as an unmatched report; it never relays.
 */
describe("the inbound SMTP listener for delivery reports", () => {
  let mx: RecipientMx;
  let h: SendingHarness;
  let a: ReadySender;
  let b: ReadySender;
  let hooks: RoutedReceiver;

  beforeAll(async () => {
    mx = await startRecipientMx();
    hooks = await startRoutedReceiver();
    h = await startSendingHarness(
      {
        emailProvider: "smtp",
        smtp: { host: "127.0.0.1", port: mx.port, secure: false, user: undefined, password: undefined },
        messageIdDomain: "mail.service.test",
        deliveryReports: deliveryReportsConfig(0),
      },
      undefined,
      { webhookDelivery: loopbackDelivery(hooks.certificate) },
    );
    a = await h.readySender({ credits: 20 });
    b = await h.readySender({ credits: 20 });
  });
  afterAll(async () => {
    await h?.close();
    await mx?.close();
    await hooks?.close();
  });

  /** Sends one message and answers its id and the VERP return path it left with. */
  async function sent(sender: ReadySender, to: string): Promise<{ id: string; returnPath: string }> {
    const { id } = (await (await h.send(sender.secret, { to, subject: "Your receipt", html: "<p>Thanks</p>" })).json()) as { id: string };
    await h.waitForMessage(sender.secret, id, (m) => m.status === "sent");
    const copy = mx.delivered.find((m) => m.raw.includes(`<${id}@mail.service.test>`));
    if (!copy) throw new Error("the MX did not get the message");
    return { id, returnPath: copy.mailFrom };
  }

  /** Posts a raw report to the inbound listener; answers the server's reply or its refusal. */
  async function post(to: string, raw: string): Promise<string> {
    const client = nodemailer.createTransport({ host: "127.0.0.1", port: h.app.inboundSmtpPort, secure: false, ignoreTLS: true });
    try {
      const info = await client.sendMail({ envelope: { from: "mailer-daemon@mx.customer.test", to }, raw });
      return info.response;
    } catch (error) {
      return `refused: ${(error as { response?: string }).response ?? String(error)}`;
    } finally {
      client.close();
    }
  }

  /** What an operator sees through DeliveryReportsService on the operator listener. */
  async function unmatchedReports(companyId: string): Promise<{ company_id: string; message_id: string; kind: string; subject: string }[]> {
    const client = createClient(DeliveryReportsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const { reports } = await client.listDeliveryReports({ companyId, kind: "unmatched" });
    return reports.map((r) => ({ company_id: r.companyId, message_id: r.messageId, kind: r.kind, subject: r.subject }));
  }

  it("an ARF complaint makes the message `complained` once, even when posted twice", async () => {
    const { secret: hookSecret } = await h.forCompany(WebhooksService, a.companyId).createWebhookEndpoint({ url: hooks.urlFor("/complaints"), events: ["complaint"] });
    const { id, returnPath } = await sent(a, "ok-reader@customer.test");
    const report = arf({ to: returnPath, originalMessageId: `${id}@mail.service.test` });
    expect(await post(returnPath, report)).toMatch(/^250/);
    expect(await post(returnPath, report)).toMatch(/^250/);
    const message = await h.waitForMessage(a.secret, id, (m) => m.status === "complained");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "complaint"]);
    const { items: suppressions } = await h.forCompany(SuppressionsService, a.companyId).listSuppressions({});
    expect(suppressions.map((x) => [x.email, x.reason])).toEqual([["ok-reader@customer.test", SuppressionReason.COMPLAINT]]);
    const [hook] = await hooks.waitOn("/complaints", 1);
    const body = verifiedBody(hook as NonNullable<typeof hook>, hookSecret);
    expect([body.event, body.data.messageId]).toEqual(["complaint", id]);
  });

  it("a DSN delivered twice bounces the message once", async () => {
    const { id, returnPath } = await sent(a, "ok-twice@customer.test");
    const report = dsn({ to: returnPath, recipient: "ok-twice@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${id}@mail.service.test` });
    expect(await post(returnPath, report)).toMatch(/^250/);
    expect(await post(returnPath, report)).toMatch(/^250/);
    const message = await h.waitForMessage(a.secret, id, (m) => m.status === "bounced");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "bounce"]);
  });

  it("a delayed DSN is noted with its message for operators, no status change", async () => {
    const { id, returnPath } = await sent(a, "ok-slow@customer.test");
    const report = dsn({ to: returnPath, recipient: "ok-slow@customer.test", action: "delayed", status: "4.4.1", originalMessageId: `${id}@mail.service.test` });
    expect(await post(returnPath, report)).toMatch(/^250/);
    const client = createClient(DeliveryReportsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const { reports } = await client.listDeliveryReports({ companyId: a.companyId, kind: "delayed" });
    expect(reports.map((r) => [r.messageId, r.kind, r.source])).toEqual([[id, "delayed", "smtp"]]);
    expect(reports[0]?.reason).toContain("4.4.1");
    // An event on the message, once even when the relay reports the delay twice, and no status change.
    expect(await post(returnPath, report)).toMatch(/^250/);
    const message = await h.waitForMessage(a.secret, id, (m) => m.events.some((e) => e.type === "delayed"));
    expect(message.status).toBe("sent");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delayed"]);
  });

  it("a forged bounce (bad token) is refused at RCPT TO and changes nothing", async () => {
    const { id, returnPath } = await sent(a, "ok-forged@customer.test");
    // The same message id with a MAC that is not ours.
    const forged = returnPath.replace(/^(b-[0-9a-f]{32})[0-9a-f]{16}@/, "$10123456789abcdef@");
    expect(forged).not.toBe(returnPath);
    const answer = await post(forged, dsn({ to: forged, recipient: "ok-forged@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${id}@mail.service.test` }));
    expect(answer).toMatch(/^refused: 550/);
    // A delivery report afterwards proves the message was still `sent`, not bounced.
    await post(returnPath, dsn({ to: returnPath, recipient: "ok-forged@customer.test", action: "delivered", status: "2.0.0", originalMessageId: `${id}@mail.service.test` }));
    const message = await h.waitForMessage(a.secret, id, (m) => m.status === "delivered");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery"]);
    const { items: suppressions } = await h.forCompany(SuppressionsService, a.companyId).listSuppressions({});
    expect(suppressions.map((x) => x.email)).not.toContain("ok-forged@customer.test");
  });

  it("a genuine token on a foreign domain is refused at RCPT TO and never taken as a bounce; on its own domain it is", async () => {
    const { id, returnPath } = await sent(a, "ok-moved@customer.test");
    const [local, domain = ""] = returnPath.split("@");
    const sendingDomain = domain.replace(/^bounces\./, "");
    for (const foreign of [`${local}@evil.example`, `${local}@bounces.evil.example`, `${local}@${sendingDomain}`]) {
      const report = dsn({ to: foreign, recipient: "ok-moved@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${id}@mail.service.test` });
      expect(await post(foreign, report)).toMatch(/^refused: 550/);
    }
    expect((await h.waitForMessage(a.secret, id, () => true)).status).toBe("sent");
    expect((await unmatchedReports(a.companyId)).filter((r) => r.message_id === id)).toEqual([]);
    expect((await h.forCompany(SuppressionsService, a.companyId).listSuppressions({})).items.map((x) => x.email)).not.toContain("ok-moved@customer.test");

    const report = dsn({ to: returnPath, recipient: "ok-moved@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${id}@mail.service.test` });
    expect(await post(returnPath, report)).toMatch(/^250/);
    const message = await h.waitForMessage(a.secret, id, (m) => m.status === "bounced");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "bounce"]);
  });

  it("a return path of the older id-only form, as mail in flight carries, works on its message's return-path domain only", async () => {
    const { id, returnPath } = await sent(b, "ok-inflight@customer.test");
    const domain = returnPath.slice(returnPath.indexOf("@") + 1);
    const foreign = idOnlyReturnPath(id, "bounces.evil.example");
    const onForeign = dsn({ to: foreign, recipient: "ok-inflight@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${id}@mail.service.test` });
    expect(await post(foreign, onForeign)).toMatch(/^refused: 550/);
    const inFlight = idOnlyReturnPath(id, domain);
    const delivered = dsn({ to: inFlight, recipient: "ok-inflight@customer.test", action: "delivered", status: "2.0.0", originalMessageId: `${id}@mail.service.test` });
    expect(await post(inFlight, delivered)).toMatch(/^250/);
    const message = await h.waitForMessage(b.secret, id, (m) => m.status === "delivered");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery"]);
  });

  it("a bounce for another company's message changes neither message", async () => {
    const mine = await sent(a, "ok-mine@customer.test");
    const theirs = await sent(b, "ok-theirs@customer.test");
    // Company A's return path, quoting company B's message.
    const report = dsn({ to: mine.returnPath, recipient: "ok-theirs@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${theirs.id}@mail.service.test` });
    expect(await post(mine.returnPath, report)).toMatch(/^250/);
    const kept = (await unmatchedReports(a.companyId)).filter((r) => r.message_id === mine.id);
    expect(kept).toEqual([{ company_id: a.companyId, message_id: mine.id, kind: "unmatched", subject: "Undelivered Mail Returned to Sender" }]);
    expect((await h.waitForMessage(a.secret, mine.id, () => true)).status).toBe("sent");
    expect((await h.waitForMessage(b.secret, theirs.id, () => true)).status).toBe("sent");
    expect((await h.forCompany(SuppressionsService, a.companyId).listSuppressions({})).items.map((x) => x.email)).not.toContain("ok-theirs@customer.test");
    expect((await h.forCompany(SuppressionsService, b.companyId).listSuppressions({})).items).toEqual([]);
  });

  it("an auto-reply is kept as an unmatched report, and the message stays as it was", async () => {
    const { id, returnPath } = await sent(b, "ok-away@customer.test");
    expect(await post(returnPath, autoReply(returnPath))).toMatch(/^250/);
    const kept = (await unmatchedReports(b.companyId)).filter((r) => r.message_id === id);
    expect(kept).toEqual([{ company_id: b.companyId, message_id: id, kind: "unmatched", subject: "Out of office: Your receipt" }]);
    expect((await h.waitForMessage(b.secret, id, () => true)).status).toBe("sent");
  });

  it("never relays: any recipient without a valid return-path token is refused", async () => {
    expect(await post("someone@customer.test", autoReply("someone@customer.test"))).toMatch(/^refused: 550/);
    expect(await post("postmaster@bounces.shop.test", autoReply("postmaster@bounces.shop.test"))).toMatch(/^refused: 550/);
  });

  it("kept reports are for operators only: not on the public listener, not without the operator token", async () => {
    const anonymous = createClient(DeliveryReportsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1" }));
    const refused = await anonymous.listDeliveryReports({}).catch((error: unknown) => error);
    expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
    const onPublic = createClient(DeliveryReportsService, createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1", interceptors: [operator] }));
    const missing = await onPublic.listDeliveryReports({}).catch((error: unknown) => error);
    expect((missing as ConnectError).code).toBe(Code.Unimplemented);
  });

  it("lists the kinds reports are kept under, and refuses any other (a rejection after acceptance is a status, not a kept report)", async () => {
    const client = createClient(DeliveryReportsService, createConnectTransport({ baseUrl: h.app.operatorUrl, httpVersion: "1.1", interceptors: [operator] }));
    const refused = await client.listDeliveryReports({ kind: "rejected_by_provider" }).catch((error: unknown) => error);
    expect((refused as ConnectError).code).toBe(Code.InvalidArgument);
    expect((refused as ConnectError).rawMessage).toMatch(/kind.*must be one of unmatched, delayed, soft_bounce$/);
  });
});
