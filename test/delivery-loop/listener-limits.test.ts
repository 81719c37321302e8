import nodemailer from "nodemailer";
import { generate } from "selfsigned";
import { afterEach, describe, expect, it } from "vitest";
import { parseInboundReport } from "../../src/adapters/email/report-parser.ts";
import type { DeliveryReportStore, KeptReport } from "../../src/capabilities/delivery-reports/ports.ts";
import { DeliveryReports } from "../../src/capabilities/delivery-reports/receive-reports.ts";
import { VerpAddresses } from "../../src/capabilities/delivery-reports/verp.ts";
import type { ProviderEvent } from "../../src/capabilities/messages/email-provider.ts";
import { createInboundSmtpListener, type InboundSmtpListener } from "../../src/transport/inbound-smtp/listener.ts";
import { idOnlyReturnPath } from "./harness.ts";
import { autoReply, dsn } from "./reports.ts";

/**
 * The inbound listener's doors against a real SMTP client: STARTTLS with the
 * configured certificate, the size limit, the per-address message limit.
 * The report store beside it is an in-memory fake (the database path is
 * covered by inbound-reports.test.ts).
 */
const VERP_KEY = "listener-test-verp-secret-0123456789";
const verp = new VerpAddresses(VERP_KEY);
const MESSAGE_ID = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";

function fakeStore(kept: KeptReport[], handedOff = true, databaseAway = false): DeliveryReportStore {
  return {
    messageById: async (messageId) => {
      if (databaseAway) throw new Error("connection refused");
      return messageId === MESSAGE_ID
        ? { companyId: "c1", messageId, provider: "smtp", providerMessageId: handedOff ? `${messageId}@mail.test` : null, sendingDomain: "shop.test" }
        : undefined;
    },
    messageByProviderId: async () => undefined,
    keep: async (report) => {
      kept.push(report);
    },
    list: async () => [],
  };
}

let listener: InboundSmtpListener | undefined;
afterEach(async () => {
  await listener?.close();
  listener = undefined;
});

const events: ProviderEvent[] = [];

async function start(
  options: { tls?: { key: string; cert: string }; maxMessageBytes?: number; messagesPerMinute?: number; handedOff?: boolean; databaseAway?: boolean },
  kept: KeptReport[],
): Promise<number> {
  const reports = new DeliveryReports({
    verp,
    store: fakeStore(kept, options.handedOff ?? true, options.databaseAway ?? false),
    providerEvents: { report: async (event) => (events.push(event), { applied: true, messageId: MESSAGE_ID }) },
  });
  listener = createInboundSmtpListener(
    {
      host: "127.0.0.1",
      port: 0,
      hostname: "feedback.mail.test",
      ...(options.tls ? { tls: options.tls } : {}),
      maxMessageBytes: options.maxMessageBytes ?? 64 * 1024,
      maxConnections: 5,
      messagesPerMinute: options.messagesPerMinute ?? 100,
    },
    { reports, parse: parseInboundReport, log: { warn: () => undefined } },
  );
  return listener.listen();
}

async function post(port: number, raw: string, tls?: { ca: string }, to = verp.addressFor(MESSAGE_ID, "bounces.shop.test")): Promise<string> {
  const client = nodemailer.createTransport({
    host: "127.0.0.1",
    port,
    secure: false,
    ...(tls ? { requireTLS: true, tls: { ca: tls.ca, servername: "feedback.mail.test" } } : { ignoreTLS: true }),
  });
  try {
    return (await client.sendMail({ envelope: { from: "mailer-daemon@mx.test", to }, raw })).response;
  } catch (error) {
    return `refused: ${(error as { response?: string }).response ?? String(error)}`;
  } finally {
    client.close();
  }
}

describe("the inbound SMTP listener's limits", () => {
  it("offers STARTTLS with the configured certificate, and takes reports over it", async () => {
    const pems = await generate([{ name: "commonName", value: "feedback.mail.test" }], {
      keySize: 2048,
      algorithm: "sha256",
      extensions: [{ name: "subjectAltName", altNames: [{ type: 2, value: "feedback.mail.test" }] }],
    });
    const kept: KeptReport[] = [];
    const port = await start({ tls: { key: pems.private, cert: pems.cert } }, kept);
    expect(await post(port, autoReply("x"), { ca: pems.cert })).toMatch(/^250/);
    expect(kept.map((k) => k.summary.subject)).toEqual(["Out of office: Your receipt"]);
  });

  it("refuses a report over the size limit with 552 and keeps nothing", async () => {
    const kept: KeptReport[] = [];
    const port = await start({ maxMessageBytes: 2048 }, kept);
    expect(await post(port, autoReply("x") + "x".repeat(5000))).toMatch(/^refused: 552/);
    expect(kept).toEqual([]);
  });

  it("limits the messages one address may send per minute", async () => {
    const kept: KeptReport[] = [];
    const port = await start({ messagesPerMinute: 2 }, kept);
    // The limit counts per clock minute: the three posts must fall in one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    expect(await post(port, autoReply("x"))).toMatch(/^250/);
    expect(await post(port, autoReply("x"))).toMatch(/^250/);
    expect(await post(port, autoReply("x"))).toMatch(/^refused: 421/);
    expect(kept).toHaveLength(2);
  });

  it("answers 451 to a report that comes before its message's handoff is recorded, so the relay retries", async () => {
    const kept: KeptReport[] = [];
    const port = await start({ handedOff: false }, kept);
    const to = verp.addressFor(MESSAGE_ID, "bounces.shop.test");
    const before = events.length;
    const report = dsn({ to, recipient: "gone@customer.test", action: "failed", status: "5.1.1", originalMessageId: `${MESSAGE_ID}@mail.test` });
    expect(await post(port, report)).toMatch(/^refused: 451/);
    expect(events.length).toBe(before);
    expect(kept).toEqual([]);
  });

  it("answers 451 at RCPT TO when a return path cannot be checked, so the relay retries", async () => {
    const kept: KeptReport[] = [];
    const port = await start({ databaseAway: true }, kept);
    // Only an address of the older id-only form needs its message read.
    expect(await post(port, autoReply("x"), undefined, idOnlyReturnPath(MESSAGE_ID, "bounces.shop.test", VERP_KEY))).toMatch(/^refused: 451 4\.3\.0 The return path cannot be checked now/);
    expect(kept).toEqual([]);
  });
});
