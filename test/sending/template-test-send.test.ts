import { simpleParser } from "mailparser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer } from "../support/api-harness.ts";
import { type SmtpRecorder, startSmtpRecorder } from "../support/smtp-sink.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type Browser, reasonOf, signedIn } from "../api/members-support.ts";

/**
 * "Send a test" of a template, end to end: a Temporal dev server and
 * worker, the SMTP email service, and a real SMTP server where the email
 * lands. The test goes to the signed-in member's own address, rendered with
 * the sample variables, as a normal message: in the log, charged.
 */
describe("a template's test send lands at the member's own address", () => {
  let smtp: SmtpRecorder;
  let h: SendingHarness;
  let s: ReadySender;
  let owner: Browser;

  beforeAll(async () => {
    smtp = await startSmtpRecorder();
    h = await startSendingHarness({
      trustProxy: true,
      emailProvider: "smtp",
      smtp: { host: "127.0.0.1", port: smtp.port, secure: false, user: undefined, password: undefined },
    });
    s = await h.readySender({ credits: 5 });
    owner = await signedIn(h, s.companyId, "owner@tests.example", "owner");
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  it("renders the stored template with the sample values, sends it as a normal message (charged, in the log, audited)", async () => {
    const saved = await owner.call("mail.v1.TemplatesService", "PutTemplate", {
      name: "order-shipped",
      subject: "Order {{ order }} shipped",
      html: "<p>Hi {{ name }}, your order is on its way.</p><script>alert(1)</script>",
      text: "Hi {{ name }}, your order is on its way.",
    });
    expect(saved.status).toBe(200);
    const templateId = (saved.body.template as { id: string }).id;

    const variables = { name: "<Ann>", order: 1001 };
    const sent = await owner.call("mail.v1.TemplatesService", "SendTestTemplate", { templateId, variables });
    expect(sent.status).toBe(200);
    expect(sent.body).toEqual({ messageId: expect.any(String), to: "owner@tests.example" });
    const messageId = String(sent.body.messageId);

    const message = await h.waitForMessage(s.secret, messageId, (m) => m.status === "sent");
    expect(message).toMatchObject({ recipient: "owner@tests.example", subject: "Order 1001 shipped", templateId });

    await expect.poll(() => smtp.landedAt("owner@tests.example").length, { timeout: 30_000 }).toBe(1);
    const mail = await simpleParser(smtp.landedAt("owner@tests.example")[0]?.raw ?? "");
    expect(mail.subject).toBe("Order 1001 shipped");
    expect(mail.from?.value[0]?.address).toBe(s.fromEmail);
    expect(mail.html).toBe("<p>Hi &lt;Ann&gt;, your order is on its way.</p>");
    expect(mail.text?.trim()).toBe("Hi <Ann>, your order is on its way.");

    // Charged like any send.
    expect(((await (await h.fetch("/mail/v1/credits", bearer(s.secret))).json()) as { balance: string }).balance).toBe("4");

    const audit = await owner.call("mail.v1.AuditService", "ListAuditEvents", { action: "template.test_sent" });
    const rows = (audit.body.items as Array<{ actor: string; targetId: string; details: string }>).map((row) => [
      row.targetId,
      row.actor,
      JSON.parse(row.details) as Record<string, unknown>,
    ]);
    expect(rows).toEqual([[templateId, "owner@tests.example", { name: "order-shipped", messageId, to: "owner@tests.example" }]]);
    const messages = await h.db.query(`select recipient from message where company_id = $1`, [s.companyId]);
    expect(messages.rows).toEqual([{ recipient: "owner@tests.example" }]);
    expect(smtp.landedAt("owner@tests.example")).toHaveLength(1);
  });

  it("a company without credits gets the send's own 402, and nothing is sent", async () => {
    const broke = await h.readySender({ credits: 0 });
    const admin = await signedIn(h, broke.companyId, "admin@broke.example", "admin");
    const saved = await admin.call("mail.v1.TemplatesService", "PutTemplate", { name: "t", subject: "s", html: "<p>h</p>" });
    const refused = await admin.call("mail.v1.TemplatesService", "SendTestTemplate", { templateId: (saved.body.template as { id: string }).id });
    // The send's own refusal (402 over REST; the session door's Connect status follows its gRPC code).
    expect(reasonOf(refused)).toBe("INSUFFICIENT_CREDITS");
    expect(smtp.landedAt("admin@broke.example")).toHaveLength(0);
  });
});
