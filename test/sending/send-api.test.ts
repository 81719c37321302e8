import { DomainStatus } from "../../src/gen/mail/v1/domains_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TemplatesService } from "../../src/gen/mail/v1/templates_pb.js";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";

interface ErrorBody {
  error: { code: string; message: string };
}

describe("POST /mail/v1/send", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    h = await startSendingHarness();
  });
  afterAll(async () => h?.close());

  const count = async (companyId: string) =>
    Number((await h.db.query<{ n: string }>(`select count(*)::text as n from message where company_id = $1`, [companyId])).rows[0]?.n);

  it("names every invalid field in one 400", async () => {
    const s = await h.readySender();
    const response = await h.send(s.secret, {
      to: { email: "not-an-address", name: "x".repeat(121) },
      subject: "s".repeat(501),
      text: "t".repeat(100_001),
      tags: { ["k".repeat(41)]: "v", ok: "v".repeat(121) },
      variables: { nested: { no: true } },
      replyTo: "nope",
      idempotencyKey: "i".repeat(161),
    });
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as ErrorBody;
    expect(error.code).toBe("VALIDATION_ERROR");
    for (const field of ["to.email", "to.name", "subject", "html", "text", "tags.", "tags.ok", "variables.nested", "replyTo", "idempotencyKey"]) {
      expect(error.message, field).toContain(field);
    }
    expect(await count(s.companyId)).toBe(0);
  });

  it("requires a template, or both subject and html", async () => {
    const s = await h.readySender();
    const response = await h.send(s.secret, { to: "a@example.com", subject: "Only a subject" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.message).toContain("html");
  });

  it("answers 402 INSUFFICIENT_CREDITS with an empty wallet, and queues nothing", async () => {
    const s = await h.readySender({ credits: 0 });
    const response = await h.send(s.secret, { to: "a@example.com", subject: "Hi", html: "<p>x</p>" });
    expect(response.status).toBe(402);
    expect(((await response.json()) as ErrorBody).error.code).toBe("INSUFFICIENT_CREDITS");
    expect(await count(s.companyId)).toBe(0);
  });

  it("answers 404 for an unknown template or sender, including another company's", async () => {
    const s = await h.readySender();
    const other = await h.readySender();
    const { template } = await h.forCompany(TemplatesService, other.companyId).putTemplate({ name: "welcome", subject: "Hi", html: "<p>x</p>" });

    for (const body of [
      { to: "a@example.com", templateId: "no-such-template" },
      { to: "a@example.com", templateId: template?.id },
      { to: "a@example.com", subject: "Hi", html: "<p>x</p>", senderId: other.senderId },
      { to: "a@example.com", subject: "Hi", html: "<p>x</p>", senderId: "00000000-0000-4000-8000-000000000000" },
    ]) {
      const response = await h.send(s.secret, body);
      expect(response.status, JSON.stringify(body)).toBe(404);
      expect(((await response.json()) as ErrorBody).error.code).toBe("NOT_FOUND");
    }
    expect(await count(s.companyId)).toBe(0);
  });

  it("answers 409 SENDER_NOT_VERIFIED without a verified sender", async () => {
    const { companyId, secret } = await h.newCompanyWithKey(["mail.transactional.send"]);
    await h.admin.adjustCredits({ companyId, amount: 5n, note: "test" });
    const noSender = await h.send(secret, { to: "a@example.com", subject: "Hi", html: "<p>x</p>" });
    expect(noSender.status).toBe(409);
    expect(((await noSender.json()) as ErrorBody).error.code).toBe("SENDER_NOT_VERIFIED");

    const { domain } = await h.admin.createSendingDomain({ companyId, domain: "unverified.example" });
    expect(domain?.status).toBe(DomainStatus.PENDING);
    await h.admin.createSender({ companyId, email: "hello@unverified.example", makeDefault: true });
    const unverified = await h.send(secret, { to: "a@example.com", subject: "Hi", html: "<p>x</p>" });
    expect(unverified.status).toBe(409);
    expect(((await unverified.json()) as ErrorBody).error.code).toBe("SENDER_NOT_VERIFIED");
  });

  // The API process reuses sender checks for a few seconds; a change must still apply to the very next send.
  it("a new default sender applies to the next send; a domain unverified behind the service's back soon refuses sends", async () => {
    const s = await h.readySender();
    const fromOf = async (response: Response) => {
      expect(response.status).toBe(202);
      const { id } = (await response.json()) as { id: string };
      return (await h.db.query<{ from_email: string }>(`select from_email from message where id = $1`, [id])).rows[0]?.from_email;
    };
    const body = { to: "a@example.com", subject: "Hi", html: "<p>x</p>" };
    expect(await fromOf(await h.send(s.secret, body))).toBe(s.fromEmail);
    const newDefault = `billing@${s.fromEmail.split("@")[1] ?? ""}`;
    await h.admin.createSender({ companyId: s.companyId, email: newDefault, makeDefault: true });
    expect(await fromOf(await h.send(s.secret, body))).toBe(newDefault);

    // An operator's SQL, not the API: only PostgreSQL's notification tells the process (well before the 10 s reuse ends).
    await h.db.query(`update sending_domain set verification_overridden = false, dkim_verified = false, verified_at = null where company_id = $1`, [s.companyId]);
    const deadline = Date.now() + 5_000;
    let status = 0;
    while (Date.now() < deadline) {
      const response = await h.send(s.secret, body);
      status = response.status;
      await response.body?.cancel();
      if (status === 409) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(status).toBe(409);
  });

  it("renders templates with variables as text and sanitises the HTML", async () => {
    const s = await h.readySender();
    await h.forCompany(TemplatesService, s.companyId).putTemplate({
      name: "receipt",
      subject: "Receipt {{ order }} for {{ name | default:customer }}",
      html: '<table><tr><td style="color:#333">Hello {{ name }}</td></tr></table><script>alert(1)</script><a href="javascript:alert(1)" onclick="x()">x</a>',
      text: "Hello {{ name }}, order {{ order }} {{ missing }}.",
    });
    const response = await h.send(s.secret, { to: "a@example.com", templateId: "receipt", variables: { name: "<b>Ada</b>", order: 42 } });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const row = (await h.db.query<{ subject: string; html: string; text_body: string; template_id: string }>(
      `select subject, html, text_body, template_id from message where id = $1`,
      [id],
    )).rows[0];
    expect(row?.subject).toBe("Receipt 42 for <b>Ada</b>");
    expect(row?.html).toContain("Hello &lt;b&gt;Ada&lt;/b&gt;");
    expect(row?.html).toContain('style="color:#333"');
    expect(row?.html).not.toContain("<script");
    expect(row?.html).not.toContain("javascript:");
    expect(row?.html).not.toContain("onclick");
    expect(row?.text_body).toBe("Hello <b>Ada</b>, order 42 .");
    const message = await h.waitForMessage(s.secret, id, (m) => m.status !== "queued");
    expect(message.templateId).toBe(row?.template_id);
  });

  it("idempotency: same key and body replays; the key names the message for the whole company", async () => {
    const s = await h.readySender();
    const body = { to: "delivered@customer.example", subject: "Once", html: "<p>once</p>" };
    const first = await h.send(s.secret, body, { "idempotency-key": "order-1001" });
    expect(first.status).toBe(202);
    const firstBody = (await first.json()) as { id: string; replayed: boolean };
    expect(firstBody.replayed).toBe(false);

    const again = await h.send(s.secret, body, { "idempotency-key": "order-1001" });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { id: string }).id).toBe(firstBody.id);

    const conflict = await h.send(s.secret, { ...body, subject: "Different" }, { "idempotency-key": "order-1001" });
    expect(conflict.status).toBe(409);
    expect(((await conflict.json()) as ErrorBody).error.code).toBe("IDEMPOTENCY_CONFLICT");

    // Another key of the same company, the key in the body this time.
    const { secret: secondKey } = await h.newKey(s.companyId, ["mail.transactional.send"]);
    const fromOtherKey = await h.send(secondKey, { ...body, idempotencyKey: "order-1001" });
    expect(fromOtherKey.status).toBe(202);
    // The same answer as the first time, whatever the message's status is by now.
    expect(await fromOtherKey.json()).toEqual({ id: firstBody.id, status: "queued", replayed: true });
    expect(await count(s.companyId)).toBe(1);
  });

  it("N concurrent identical sends create exactly one message", async () => {
    const s = await h.readySender();
    const body = { to: "delivered@customer.example", subject: "Race", html: "<p>race</p>" };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => h.send(s.secret, body, { "idempotency-key": "race-1" })),
    );
    for (const answer of answers) expect(answer.status).toBe(202);
    const ids = new Set(await Promise.all(answers.map(async (a) => ((await a.json()) as { id: string }).id)));
    expect(ids.size).toBe(1);
    expect(await count(s.companyId)).toBe(1);

    const viaBodyKey = await Promise.all(
      Array.from({ length: 10 }, (_, i) => h.send(s.secret, { ...body, idempotencyKey: "race-2", subject: `Race ${i % 1}` })),
    );
    const bodyIds = new Set(await Promise.all(viaBodyKey.map(async (a) => ((await a.json()) as { id: string }).id)));
    expect(bodyIds.size).toBe(1);
    expect(await count(s.companyId)).toBe(2);
  });
});
