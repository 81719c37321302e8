import { randomBytes } from "node:crypto";
import { ApiKeysService } from "../../src/gen/mail/v1/api_keys_pb.js";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WEBHOOK_EVENT_NAMES } from "../../src/capabilities/webhooks/index.ts";
import { bearer } from "../support/api-harness.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, loopbackDelivery } from "../webhooks/api-support.ts";

/** Every line the service logs, as written. */
class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
    callback();
  }
}

/**
 * A whole flow at debug level (keys, a send through the worker to the
 * simulator, a webhook endpoint and its deliveries, refused requests) logs
 * structured JSON lines with the request id, and never an API key, a
 * webhook secret, a recipient address, a subject or a message body.
 */
describe("logs", () => {
  const logs = new LogCapture();
  let hooks: RoutedReceiver;
  let h: SendingHarness;
  const unique = randomBytes(4).toString("hex");
  const recipient = `log-recipient-${unique}@customer.example`;
  const subject = `Log subject ${unique}`;
  const html = `<p>Log body ${unique}</p>`;
  const secrets: string[] = [];

  beforeAll(async () => {
    hooks = await startRoutedReceiver();
    h = await startSendingHarness({ logLevel: "debug" }, undefined, {
      webhookDelivery: loopbackDelivery(hooks.certificate),
      logger: { level: "debug", stream: logs },
    });
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await hooks?.close();
  });

  it("holds no secret, address, subject or body after a full flow", async () => {
    const sender = await h.readySender({ scopes: ["mail.transactional.send", "mail.events.read", "mail.admin"] });
    secrets.push(sender.secret);

    // A webhook endpoint, created with the API key: its secret is in the answer only.
    const endpoint = await h.fetch("/mail/v1/webhooks", {
      method: "POST",
      headers: { authorization: `Bearer ${sender.secret}`, "content-type": "application/json" },
      body: JSON.stringify({ url: hooks.urlFor("/logs"), events: [...WEBHOOK_EVENT_NAMES] }),
    });
    expect(endpoint.status).toBe(201);
    secrets.push(((await endpoint.json()) as { secret: string }).secret);
    const rotated = await h.forCompany(ApiKeysService, sender.companyId).rotateApiKey({ id: sender.keyId });
    secrets.push(rotated.secret);

    // A send that goes all the way, and its webhook delivery.
    const accepted = await h.send(sender.secret, { to: { email: recipient, name: "Log Person" }, subject, html, text: `Log text ${unique}` });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    await h.waitForMessage(sender.secret, id, (m) => m.status === "delivered");
    await hooks.waitOn("/logs", 1);

    // Refused requests carrying the same data.
    expect((await h.send(sender.secret, { to: recipient, subject, html, unknownField: true })).status).toBe(400);
    expect((await h.send(sender.secret, { to: `not-an-address ${recipient}`, subject, html })).status).toBe(400);
    const malformed = await h.fetch("/mail/v1/send", {
      method: "POST",
      headers: { authorization: `Bearer ${sender.secret}`, "content-type": "application/json" },
      body: `{"to": "${recipient}", "subject": "${subject}", "html": "${html}"`,
    });
    expect(malformed.status).toBe(400);
    expect((await h.send(`${sender.secret}x`, { to: recipient, subject, html })).status).toBe(401);
    expect((await h.fetch(`/mail/v1/messages?q=${encodeURIComponent(recipient)}`, bearer(sender.secret))).status).toBe(200);
    expect((await h.fetch(`/mail/v1/contacts/${encodeURIComponent(recipient)}`, bearer(sender.secret))).status).toBeGreaterThanOrEqual(400);
    expect((await h.fetch(`/mail/v1/nowhere?key=${sender.secret}`, bearer(sender.secret))).status).toBe(404);

    const text = logs.lines.join("\n");
    expect(logs.lines.length).toBeGreaterThan(10);
    // JSON lines, and the request lines carry the request id.
    for (const line of logs.lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    const requestLines = logs.lines.map((line) => JSON.parse(line) as { reqId?: string; req?: unknown }).filter((line) => line.req);
    expect(requestLines.length).toBeGreaterThan(0);
    for (const line of requestLines) expect(line.reqId).toMatch(/\S{8,}/);
    // The requests above were captured, in their redacted form.
    expect(text).toContain("/mail/v1/messages?q=[redacted]");
    expect(text).toContain("/mail/v1/contacts/[email]");

    const forbidden = [...secrets, recipient, encodeURIComponent(recipient), `log-recipient-${unique}`, subject, html, `Log body ${unique}`, `Log text ${unique}`];
    for (const value of forbidden) expect(text.includes(value), `the logs hold ${value}`).toBe(false);
  }, 90_000);
});
