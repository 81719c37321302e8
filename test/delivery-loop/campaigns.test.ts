import { createPublicKey, randomBytes } from "node:crypto";
import { DnsRecordPurpose } from "../../src/gen/mail/v1/domains_pb.js";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CampaignMessageDecorator } from "../../src/capabilities/campaigns/ports.ts";
import { startWorkerProcess, type WorkerProcess } from "../../src/wiring/worker.ts";
import { checkDkim, splitMessage, unfold } from "../adapters/email/dkim-verify.ts";
import { bearer, testConfig } from "../support/api-harness.ts";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";

/**
 * Campaigns end to end through the SMTP adapter to a real SMTP server that
 * records every copy it receives (the sink): a Temporal dev server, the API
 * process, and a worker built from the same parts with a test decorator
 * that adds List-Unsubscribe headers (the tracking capability's place). The
 * sink counts copies per recipient: one per subscribed contact however many
 * chosen lists it is in, none for skipped or suppressed contacts, none for
 * a contact who unsubscribed before its copy was handed over; pause stops
 * the copies within a batch, resume goes on where it stopped, cancel ends
 * the campaign with counters that add up. The headers arrive, covered by
 * the DKIM signature.
 */

interface Received {
  readonly rcptTo: string;
  readonly raw: string;
}

interface CampaignJson {
  id: string;
  state: string;
  counters: Record<string, number>;
}

/** The test's stand-in for tracking and unsubscribe: the headers only. */
const LIST_UNSUBSCRIBE: CampaignMessageDecorator = {
  decorate: (input) =>
    Promise.resolve({
      html: input.html,
      text: input.text,
      headers: {
        "List-Unsubscribe": `<https://mail.test/u/${input.recipientId}>, <mailto:unsubscribe+${input.recipientId}@mail.test>`,
        "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
      },
    }),
};

describe("campaigns through SMTP, counted at the sink", () => {
  let smtp: SMTPServer;
  const received: Received[] = [];
  let h: SendingHarness;
  let worker: WorkerProcess;
  let company: ReadySender;

  const json = (method: string, body?: unknown): RequestInit => ({
    method,
    headers: { authorization: `Bearer ${company.secret}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const copiesTo = (email: string) => received.filter((r) => r.rcptTo === email.toLowerCase()).length;

  async function newList(name: string): Promise<string> {
    const response = await h.fetch("/mail/v1/lists", json("POST", { name }));
    return ((await response.json()) as { list: { id: string } }).list.id;
  }

  async function contacts(prefix: string, count: number, status: string, lists: string[]): Promise<string[]> {
    const emails = Array.from({ length: count }, (_, i) => `${prefix}-${i}@sink.example`);
    const { rows } = await h.db.query<{ id: string }>(
      `insert into contact (company_id, email, email_normalized, status)
       select $1, e, e, $3 from unnest($2::text[]) as e returning id`,
      [company.companyId, emails, status],
    );
    for (const list of lists) {
      await h.db.query(`insert into contact_list_member (company_id, list_id, contact_id) select $1, $2, unnest($3::uuid[])`, [
        company.companyId,
        list,
        rows.map((r) => r.id),
      ]);
    }
    return emails;
  }

  async function campaign(name: string, listIds: string[]): Promise<string> {
    const response = await h.fetch("/mail/v1/campaigns", json("POST", { name, audience: { listIds }, content: { subject: `${name} {{email}}`, html: "<p>Hello</p>", text: "Hello" } }));
    expect(response.status).toBe(201);
    return ((await response.json()) as { campaign: { id: string } }).campaign.id;
  }

  async function get(id: string): Promise<CampaignJson> {
    return (await (await h.fetch(`/mail/v1/campaigns/${id}`, bearer(company.secret))).json()) as CampaignJson;
  }

  async function until<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 240_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    let last = await read();
    while (!done(last)) {
      if (Date.now() > deadline) throw new Error(`${what}: last seen ${JSON.stringify(last)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
      last = await read();
    }
    return last;
  }

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      disabledCommands: ["STARTTLS"],
      logger: false,
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => {
          for (const rcpt of session.envelope.rcptTo) received.push({ rcptTo: rcpt.address.toLowerCase(), raw: Buffer.concat(chunks).toString("utf8") });
          callback(null, "2.0.0 Ok: queued");
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", resolve));
    const port = (smtp.server.address() as AddressInfo).port;
    const settings = {
      emailProvider: "smtp" as const,
      smtp: { host: "127.0.0.1", port, secure: false, user: undefined, password: undefined },
      messageIdDomain: "mail.service.test",
      temporalTaskQueue: `campaigns-${randomBytes(4).toString("hex")}`,
      // Slow enough to pause a campaign in the middle: 40 copies a second.
      sendingRatePerSecond: 40,
      sendingBurst: 4,
    };
    // The API process without a worker; the worker is built here from the same parts, with the test decorator.
    h = await startSendingHarness({ ...settings, runWorker: false });
    worker = await startWorkerProcess(
      testConfig({ ...settings, temporalAddress: h.temporal.address, runWorker: true, handoffTimeoutSeconds: 10 }),
      h.db.url,
      { warn: (details, message) => console.warn(message, details) },
      { campaignDecorator: LIST_UNSUBSCRIBE },
    );
    company = await h.readySender({ credits: 1_000, scopes: ["mail.admin", "mail.events.read"] });
  }, 300_000);
  afterAll(async () => {
    await worker?.stop();
    await h?.close();
    await new Promise<void>((resolve) => smtp.close(() => resolve()));
  });

  it("one copy per subscribed contact across two lists, none for skipped or suppressed ones; List-Unsubscribe arrives signed by DKIM", async () => {
    const listA = await newList("A");
    const listB = await newList("B");
    const onlyA = await contacts("only-a", 20, "subscribed", [listA]);
    const both = await contacts("both", 10, "subscribed", [listA, listB]);
    const pending = await contacts("pending", 3, "pending", [listB]);
    const gone = await contacts("gone", 3, "unsubscribed", [listA]);
    const bounced = await contacts("bounced", 2, "bounced", [listB]);
    const listed = await contacts("listed", 2, "subscribed", [listB]);
    for (const email of listed) await h.app.suppressions.suppress({ companyId: company.companyId, email, reason: "manual" });

    const id = await campaign("Two lists", [listA, listB]);
    expect((await h.fetch(`/mail/v1/campaigns/${id}/schedule`, json("POST", {}))).status).toBe(200);
    const sent = await until("the campaign is sent", () => get(id), (c) => c.state === "sent");
    expect(sent.counters).toEqual({ audience: 40, accepted: 30, failed: 0, unknown: 0, suppressed: 4, skipped: 6, waiting: 0 });

    for (const email of [...onlyA, ...both]) expect(copiesTo(email), email).toBe(1);
    for (const email of [...pending, ...gone, ...bounced, ...listed]) expect(copiesTo(email), email).toBe(0);

    const copy = received.find((r) => r.rcptTo === both[0]);
    const headers = new Map(splitMessage(copy?.raw ?? "").headers.map((f) => [f.name.toLowerCase(), unfold(f.value)]));
    expect(headers.get("list-unsubscribe")).toMatch(/^<https:\/\/mail\.test\/u\/[0-9a-f-]{36}>, <mailto:unsubscribe\+[0-9a-f-]{36}@mail\.test>$/);
    expect(headers.get("list-unsubscribe-post")).toBe("List-Unsubscribe=One-Click");
    expect(headers.get("subject")).toBe(`Two lists ${both[0]}`);
    const { domains } = await h.admin.listSendingDomains({ companyId: company.companyId });
    const dkimRecord = domains[0]?.records.find((r) => r.purpose === DnsRecordPurpose.DKIM);
    const publicKeyBase64 = /p=([A-Za-z0-9+/=]+)/.exec(dkimRecord?.value.replace(/\s+/g, "") ?? "")?.[1] ?? "";
    const publicKey = createPublicKey({ key: Buffer.from(publicKeyBase64, "base64"), format: "der", type: "spki" });
    const dkim = checkDkim(copy?.raw ?? "", publicKey);
    expect(dkim.signatureValid).toBe(true);
    expect(dkim.bodyHashMatches).toBe(true);
    const signed = (dkim.tags.h ?? "").toLowerCase().split(":").map((name) => name.trim());
    expect(signed).toEqual(expect.arrayContaining(["list-unsubscribe", "list-unsubscribe-post"]));
  }, 300_000);

  it("pause stops the copies within a batch, an unsubscribe meanwhile is skipped, resume sends the rest once each", async () => {
    const list = await newList("Paused");
    const emails = await contacts("paused", 150, "subscribed", [list]);
    const id = await campaign("Paused", [list]);
    expect((await h.fetch(`/mail/v1/campaigns/${id}/schedule`, json("POST", {}))).status).toBe(200);
    const arrived = () => Promise.resolve(emails.filter((e) => copiesTo(e) > 0).length);
    await until("the first copies arrive", arrived, (n) => n >= 10);
    const paused = await h.fetch(`/mail/v1/campaigns/${id}/pause`, json("POST", {}));
    expect(paused.status).toBe(200);
    // Within one batch, nothing more leaves.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const atPause = await arrived();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await arrived()).toBe(atPause);
    expect(atPause).toBeLessThan(150);
    expect((await get(id)).state).toBe("paused");

    // A contact still waiting unsubscribes: its copy is never handed over.
    const { rows } = await h.db.query<{ email: string }>(
      `select email from campaign_recipient where campaign_id = $1 and outcome = 'waiting' order by id desc limit 1`,
      [id],
    );
    const leaving = rows[0]?.email ?? "";
    await h.db.query(`update contact set status = 'unsubscribed' where company_id = $1 and email = $2`, [company.companyId, leaving]);

    expect((await h.fetch(`/mail/v1/campaigns/${id}/resume`, json("POST", {}))).status).toBe(200);
    const sent = await until("the campaign is sent", () => get(id), (c) => c.state === "sent");
    expect(sent.counters).toEqual({ audience: 150, accepted: 149, failed: 0, unknown: 0, suppressed: 0, skipped: 1, waiting: 0 });
    expect(copiesTo(leaving)).toBe(0);
    for (const email of emails.filter((e) => e !== leaving)) expect(copiesTo(email), email).toBe(1);
  }, 300_000);

  it("cancel ends a campaign under way: what was handed over is counted accepted, the rest skipped, campaign.sent says so", async () => {
    const list = await newList("Cancelled");
    const emails = await contacts("cancelled", 150, "subscribed", [list]);
    const id = await campaign("Cancelled", [list]);
    expect((await h.fetch(`/mail/v1/campaigns/${id}/schedule`, json("POST", {}))).status).toBe(200);
    await until("the first copies arrive", () => Promise.resolve(emails.filter((e) => copiesTo(e) > 0).length), (n) => n >= 10);
    expect((await h.fetch(`/mail/v1/campaigns/${id}/cancel`, json("POST", {}))).status).toBe(200);
    const summary = await until(
      "campaign.sent is recorded",
      async () => (await h.db.query<{ data: Record<string, number> }>(`select data from webhook_event where event = 'campaign.sent' and data->>'campaignId' = $1`, [id])).rows,
      (rows) => rows.length === 1,
    );
    const ended = await get(id);
    expect(ended.state).toBe("cancelled");
    const copies = emails.filter((e) => copiesTo(e) > 0);
    expect(copies.every((e) => copiesTo(e) === 1)).toBe(true);
    expect(ended.counters.accepted).toBe(copies.length);
    expect((ended.counters.accepted ?? 0) + (ended.counters.skipped ?? 0)).toBe(150);
    expect(ended.counters.waiting).toBe(0);
    expect(summary[0]?.data).toMatchObject({ accepted: copies.length, skipped: 150 - copies.length, failed: 0, suppressed: 0, unknown: 0 });
  }, 300_000);
});
