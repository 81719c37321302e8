import { randomUUID } from "node:crypto";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import sesLocalModule from "aws-ses-v2-local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type FakeSns, startFakeSns } from "./sns.ts";
import { SuppressionReason, SuppressionsService } from "../../src/gen/mail/v1/suppressions_pb.js";
import { CreditsService } from "../../src/gen/mail/v1/credits_pb.js";

/**
 * EMAIL_PROVIDER=ses: messages go out through the SES v2 API (a local SES v2
 * emulator, aws-ses-v2-local), and SES event notifications come back over
 * HTTPS from SNS, signed by a test certificate served under the SNS host.
 */
const PATH = "/mail/v1/providers/ses/notifications";

// A CommonJS module with a default export: callable as is under vitest, through `.default` under Node.
type StartSesLocal = typeof sesLocalModule.default;
const loaded = sesLocalModule as unknown as StartSesLocal | { default: StartSesLocal };
const sesLocal: StartSesLocal = typeof loaded === "function" ? loaded : loaded.default;

describe("Amazon SES as the email service", () => {
  let ses: Server;
  let sesUrl: string;
  let sns: FakeSns;
  let h: SendingHarness;
  let s: ReadySender;

  beforeAll(async () => {
    // The SDK's default credential chain reads these; the emulator takes any.
    process.env.AWS_ACCESS_KEY_ID ??= "AKIDTEST";
    process.env.AWS_SECRET_ACCESS_KEY ??= "test-secret";
    ses = await sesLocal({ host: "127.0.0.1", port: 0 });
    if (!ses.listening) await new Promise<void>((resolve) => ses.once("listening", () => resolve()));
    sesUrl = `http://127.0.0.1:${(ses.address() as AddressInfo).port}`;
    sns = await startFakeSns("us-east-1");
    h = await startSendingHarness(
      {
        emailProvider: "ses",
        messageIdDomain: "mail.service.test",
        deliveryReports: {
          verpSecret: "test-verp-secret-0123456789abcdef",
          inboundSmtp: { enabled: false, host: "127.0.0.1", port: 0, tlsCertFile: undefined, tlsKeyFile: undefined, maxMessageBytes: 1024, maxConnections: 1, messagesPerMinute: 1 },
          ses: { region: "us-east-1", configurationSet: "mail-events", endpoint: sesUrl, snsTopicArn: sns.topicArn },
        },
      },
      undefined,
      { deliveryReports: { snsAgent: sns.agent } },
    );
    s = await h.readySender({ credits: 20 });
  });
  afterAll(async () => {
    await h?.close();
    await sns?.close();
    await new Promise<void>((resolve) => (ses ? ses.close(() => resolve()) : resolve()));
  });

  /** Sends one message through SES; answers our id and SES's MessageId. */
  async function sent(to: string): Promise<{ id: string; sesId: string }> {
    const { id } = (await (await h.send(s.secret, { to, subject: `Receipt ${to}`, html: "<p>Thanks</p>" })).json()) as { id: string };
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "sent");
    return { id, sesId: message.providerMessageId ?? "" };
  }

  function post(body: unknown): Promise<Response> {
    return h.fetch(PATH, { method: "POST", headers: { "content-type": "text/plain; charset=UTF-8" }, body: JSON.stringify(body) });
  }

  const mail = (sesId: string) => ({ messageId: sesId, timestamp: new Date().toISOString(), source: s.fromEmail, destination: ["x@customer.test"] });

  it("sends our raw MIME message through the SES v2 API", async () => {
    const { sesId } = await sent("ada@customer.test");
    const store = (await (await fetch(`${sesUrl}/store`)).json()) as { emails: { messageId: string; subject: string; from: string; destination: { to: string[] } }[] };
    const email = store.emails.find((e) => e.messageId === sesId);
    expect(email?.subject).toBe("Receipt ada@customer.test");
    expect(email?.destination.to).toEqual(["ada@customer.test"]);
    // The emulator read these from our raw MIME message (SendEmail Content.Raw).
    expect(email?.from).toContain(s.fromEmail);
  });

  it("hands SES one raw message with the attachments and the inline image in it", async () => {
    const pdf = Buffer.from("%PDF-1.7\nan invoice\n%%EOF\n");
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    const response = await h.send(s.secret, {
      to: "files@customer.test",
      subject: "Invoice with files",
      html: `<p>Invoice</p><img src="cid:logo">`,
      attachments: [
        { filename: "Rechnung März.pdf", contentType: "application/pdf", content: pdf.toString("base64") },
        { filename: "logo.png", contentType: "image/png", content: png.toString("base64"), contentId: "logo" },
      ],
    });
    const { id } = (await response.json()) as { id: string };
    const sesId = (await h.waitForMessage(s.secret, id, (m) => m.status === "sent")).providerMessageId;
    type Stored = { messageId: string; attachments: { filename: string; contentType: string; content: string; cid?: string }[] };
    const store = (await (await fetch(`${sesUrl}/store`)).json()) as { emails: Stored[] };
    // The emulator parsed these out of our raw MIME message (SendEmail Content.Raw) with mailparser.
    const files = store.emails.find((e) => e.messageId === sesId)?.attachments ?? [];
    expect(files.map((f) => [f.filename, f.contentType, Buffer.from(f.content, "base64").toString("base64"), f.cid ?? null]).sort()).toEqual(
      [
        ["Rechnung März.pdf", "application/pdf", pdf.toString("base64"), null],
        ["logo.png", "image/png", png.toString("base64"), "logo"],
      ].sort(),
    );
  });

  it("Delivery, Bounce (Permanent) and Complaint notifications move the message, once", async () => {
    const delivered = await sent("ok-delivered@customer.test");
    const bounced = await sent("gone@customer.test");
    const complained = await sent("angry@customer.test");

    const delivery = sns.notification({ notificationType: "Delivery", mail: mail(delivered.sesId), delivery: { timestamp: new Date().toISOString(), smtpResponse: "250 ok" } });
    expect((await post(delivery)).status).toBe(200);
    expect((await post(delivery)).status).toBe(200); // SNS retried it
    const bounce = sns.notification({
      notificationType: "Bounce",
      mail: mail(bounced.sesId),
      bounce: { bounceType: "Permanent", bounceSubType: "General", timestamp: new Date().toISOString(), bouncedRecipients: [{ emailAddress: "gone@customer.test", status: "5.1.1", diagnosticCode: "smtp; 550 5.1.1 user unknown" }] },
    });
    expect((await post(bounce)).status).toBe(200);
    const complaint = sns.notification({ eventType: "Complaint", mail: mail(complained.sesId), complaint: { timestamp: new Date().toISOString(), complaintFeedbackType: "abuse" } });
    expect((await post(complaint)).status).toBe(200);

    expect((await h.waitForMessage(s.secret, delivered.id, (m) => m.status === "delivered")).events.map((e) => e.type)).toEqual(["sent", "delivery"]);
    expect((await h.waitForMessage(s.secret, bounced.id, (m) => m.status === "bounced")).events.map((e) => e.type)).toEqual(["sent", "bounce"]);
    expect((await h.waitForMessage(s.secret, complained.id, (m) => m.status === "complained")).events.map((e) => e.type)).toEqual(["sent", "complaint"]);
    const { items: suppressions } = await h.forCompany(SuppressionsService, s.companyId).listSuppressions({});
    expect(suppressions.map((x) => `${x.email}:${SuppressionReason[x.reason]}`).sort()).toEqual(["angry@customer.test:COMPLAINT", "gone@customer.test:BOUNCE"]);
  });

  it("a Reject after acceptance makes the message `rejected` and returns its credit, once", async () => {
    const before = (await h.forCompany(CreditsService, s.companyId).getCredits({})).balance;
    const { id, sesId } = await sent("virus@customer.test");
    const charged = (await h.forCompany(CreditsService, s.companyId).getCredits({})).balance;
    expect(charged).toBe(before - 1n);
    const reject = sns.notification({ notificationType: "Reject", mail: mail(sesId), reject: { reason: "Bad content" } });
    expect((await post(reject)).status).toBe(200);
    expect((await post(reject)).status).toBe(200); // SNS retried it
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "rejected");
    expect(message.events.map((e) => e.type)).toEqual(["sent", "reject"]);
    expect((await h.forCompany(CreditsService, s.companyId).getCredits({})).balance).toBe(before);
  });

  it("a transient bounce is noted, not a status change", async () => {
    const { id, sesId } = await sent("full-mailbox@customer.test");
    const soft = sns.notification({ notificationType: "Bounce", mail: mail(sesId), bounce: { bounceType: "Transient", timestamp: new Date().toISOString(), bouncedRecipients: [] } });
    expect(await (await post(soft)).json()).toEqual({ outcome: "noted" });
    expect((await h.waitForMessage(s.secret, id, () => true)).status).toBe("sent");
  });

  it("a bad signature or a certificate URL off the SNS host is refused with 403, and nothing changes", async () => {
    const { id, sesId } = await sent("ok-untouched@customer.test");
    const bounce = { notificationType: "Bounce", mail: mail(sesId), bounce: { bounceType: "Permanent", timestamp: new Date().toISOString(), bouncedRecipients: [] } };

    const tampered = await post(sns.notification(bounce, { tamper: true }));
    expect(tampered.status).toBe(403);
    expect(((await tampered.json()) as { error: { code: string } }).error.code).toBe("FORBIDDEN");
    const signedWithOther = sns.notification(bounce);
    signedWithOther.Signature = sns.notification({ other: true }).Signature ?? "";
    expect((await post(signedWithOther)).status).toBe(403);
    for (const certUrl of [
      "https://evil.example/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem",
      "https://sns.eu-west-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem",
      "http://sns.us-east-1.amazonaws.com/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem",
      "https://sns.us-east-1.amazonaws.com.evil.example/SimpleNotificationService-0123456789abcdef0123456789abcdef.pem",
    ]) {
      const response = await post(sns.notification(bounce, { certUrl }));
      expect(response.status, certUrl).toBe(403);
    }
    expect((await post("not json at all")).status).toBe(403);

    expect((await h.waitForMessage(s.secret, id, () => true)).status).toBe("sent");
    const { items: suppressions } = await h.forCompany(SuppressionsService, s.companyId).listSuppressions({});
    expect(suppressions.map((x) => x.email)).not.toContain("ok-untouched@customer.test");
  });

  it("confirms the SNS subscription", async () => {
    const response = await post(sns.subscriptionConfirmation());
    expect(response.status).toBe(200);
    expect(sns.confirmed).toHaveLength(1);
  });

  // Last: it spends this address's budget of failures, which every door shares (API keys from here wait too).
  it("an address that keeps sending forged notifications is refused with 429, without fetching anything more", async () => {
    const bounce = { notificationType: "Bounce", mail: mail(randomUUID()), bounce: { bounceType: "Permanent", timestamp: new Date().toISOString(), bouncedRecipients: [] } };
    // Each names a certificate nobody has seen on the SNS host: the validator would fetch every one.
    const forged = () => post(sns.notification(bounce, { certUrl: `https://sns.us-east-1.amazonaws.com/SimpleNotificationService-${randomUUID().replaceAll("-", "")}.pem` }));
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) statuses.push((await forged()).status);
    const refused = statuses.filter((status) => status === 403).length;
    // 30 failures per address and minute (the earlier tests of this file spent a few of them).
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThanOrEqual(30);
    expect(statuses.slice(refused).every((status) => status === 429)).toBe(true);

    const fetchedBefore = sns.requested.length;
    const limited = await forged();
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("x-request-id")).toBeTruthy();
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
    // A well-signed one from the same address waits too; nothing was fetched for either.
    expect((await post(sns.notification(bounce))).status).toBe(429);
    expect(sns.requested.length).toBe(fetchedBefore);
  });
});
