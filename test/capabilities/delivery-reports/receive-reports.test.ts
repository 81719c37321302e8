import { describe, expect, it } from "vitest";
import { ApiError, ValidationError } from "../../../src/contract/api-error.ts";
import type { DeliveryReportStore, InboundReport, KeptReport, ReportedMessage, StoredReport } from "../../../src/capabilities/delivery-reports/ports.ts";
import { DeliveryReports, type InboundReportCommand, type SesNotificationCommand } from "../../../src/capabilities/delivery-reports/receive-reports.ts";
import { VerpAddresses } from "../../../src/capabilities/delivery-reports/verp.ts";
import type { ProviderEvent } from "../../../src/capabilities/messages/email-provider.ts";

/**
 * What a delivery report does to its message, with in-memory fakes of the
 * report store and the provider events intake. The VERP tokens and the
 * mapping tables are test/delivery-loop/verp-and-mapping.test.ts's subject,
 * the SMTP and SNS doors test/delivery-loop's; these pin the use case's
 * decisions: which event goes in under which id (so a report twice is a
 * duplicate), what is kept for operators, and when the sender must retry.
 */

const KEY = "verp-secret-for-tests-0123456789";
const MESSAGE_ID = "0f8fad5b-d9cb-469f-a165-70867728950e";
const OTHER_MESSAGE_ID = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
const COMPANY = "c0000000-0000-4000-8000-000000000001";
const RECEIVED = new Date("2025-03-01T12:00:00.000Z");

const MESSAGE: ReportedMessage = {
  companyId: COMPANY,
  messageId: MESSAGE_ID,
  provider: "smtp",
  providerMessageId: `${MESSAGE_ID}@mail.service.test`,
  sendingDomain: "shop.example",
};

/** The provider events intake: idempotent on the event id; NOT_FOUND for a message it does not know under that id. */
class Intake {
  readonly events: ProviderEvent[] = [];
  readonly #seen = new Set<string>();
  known = true;

  async report(event: ProviderEvent): Promise<{ applied: boolean; messageId: string }> {
    if (!this.known) throw new ApiError("NOT_FOUND", "no such message");
    this.events.push(event);
    const applied = !this.#seen.has(event.providerEventId);
    this.#seen.add(event.providerEventId);
    return { applied, messageId: MESSAGE_ID };
  }
}

class Store implements DeliveryReportStore {
  readonly kept: KeptReport[] = [];
  readonly listed: Parameters<DeliveryReportStore["list"]>[0][] = [];
  messages = new Map<string, ReportedMessage>([[MESSAGE_ID, MESSAGE]]);

  async messageById(messageId: string): Promise<ReportedMessage | undefined> {
    return this.messages.get(messageId);
  }
  async messageByProviderId(provider: string, providerMessageId: string): Promise<ReportedMessage | undefined> {
    return [...this.messages.values()].find((m) => m.provider === provider && m.providerMessageId === providerMessageId);
  }
  async keep(report: KeptReport): Promise<void> {
    this.kept.push(report);
  }
  async list(query: Parameters<DeliveryReportStore["list"]>[0]): Promise<StoredReport[]> {
    this.listed.push(query);
    return [];
  }
}

function setup() {
  const verp = new VerpAddresses(KEY);
  const store = new Store();
  const intake = new Intake();
  const reports = new DeliveryReports({ verp, store, providerEvents: intake });
  const returnPath = verp.addressFor(MESSAGE_ID, "bounces.shop.example");
  const inbound = (report: InboundReport, recipients: readonly string[] = [returnPath]): InboundReportCommand => ({
    recipients,
    report,
    summary: { from: "MAILER-DAEMON@mx.customer.example", subject: "Undelivered Mail", excerpt: "..." },
    receivedAt: RECEIVED,
  });
  return { verp, store, intake, reports, returnPath, inbound };
}

const dsn = (action: string, status: string, extra: { diagnostic?: string; originalMessageId?: string } = {}): InboundReport => ({
  kind: "dsn",
  recipients: [{ action, status, ...(extra.diagnostic ? { diagnostic: extra.diagnostic } : {}) }],
  ...(extra.originalMessageId ? { originalMessageId: extra.originalMessageId } : {}),
});

describe("delivery reports by SMTP", () => {
  it("applies a hard bounce once: the same report again is a duplicate under the same event id", async () => {
    const { reports, intake, store, inbound } = setup();
    const bounce = inbound(dsn("failed", "5.1.1", { diagnostic: "smtp;  550 5.1.1\n  user unknown", originalMessageId: `<${MESSAGE_ID}@MAIL.service.test>` }));
    expect(await reports.receiveInbound(bounce)).toEqual(["applied"]);
    expect(await reports.receiveInbound(bounce)).toEqual(["duplicate"]);
    expect(intake.events.map((e) => e.providerEventId)).toEqual([`verp:${MESSAGE_ID}:bounced`, `verp:${MESSAGE_ID}:bounced`]);
    // The remote server's words, on one line, with the status first.
    expect(intake.events[0]).toEqual({
      providerEventId: `verp:${MESSAGE_ID}:bounced`,
      providerMessageId: MESSAGE.providerMessageId,
      type: "bounced",
      occurredAt: RECEIVED,
      detail: "5.1.1 smtp; 550 5.1.1 user unknown",
    });
    expect(store.kept).toEqual([]);
  });

  it("keeps a remote server's words to 300 characters", async () => {
    const { reports, intake, inbound } = setup();
    await reports.receiveInbound(inbound(dsn("failed", "5.7.1", { diagnostic: "x".repeat(1_000) })));
    expect(intake.events[0]?.detail).toHaveLength(300);
  });

  it("counts one message once when several of the report's recipients name it", async () => {
    const { reports, intake, inbound, returnPath } = setup();
    expect(await reports.receiveInbound(inbound(dsn("delivered", "2.0.0"), [returnPath, returnPath.toUpperCase()]))).toEqual(["applied"]);
    expect(intake.events).toHaveLength(1);
  });

  it("lets the first recipient block with an action decide", async () => {
    const { reports, intake, inbound } = setup();
    const report: InboundReport = {
      kind: "dsn",
      recipients: [
        { action: " ", status: "5.1.1" },
        { action: "delivered", status: "2.0.0" },
        { action: "failed", status: "5.1.1" },
      ],
    };
    expect(await reports.receiveInbound(inbound(report))).toEqual(["applied"]);
    expect(intake.events.map((e) => e.type)).toEqual(["delivered"]);
    const { reports: again, store } = setup();
    expect(await again.receiveInbound(inbound({ kind: "dsn", recipients: [{ action: "", status: "5.1.1" }] }))).toEqual(["unmatched"]);
    expect(store.kept.map((k) => [k.kind, k.reason, k.messageId])).toEqual([["unmatched", "DSN without a recipient action", MESSAGE_ID]]);
  });

  it("keeps a soft bounce for operators and notes it on the message as a delay, never a status change", async () => {
    const { reports, intake, store, inbound } = setup();
    expect(await reports.receiveInbound(inbound(dsn("failed", "4.2.2", { diagnostic: "mailbox full" })))).toEqual(["noted"]);
    expect(store.kept).toEqual([
      {
        source: "smtp",
        kind: "soft_bounce",
        reason: "4.2.2 mailbox full",
        companyId: COMPANY,
        messageId: MESSAGE_ID,
        summary: { from: "MAILER-DAEMON@mx.customer.example", subject: "Undelivered Mail", excerpt: "..." },
        receivedAt: RECEIVED,
      },
    ]);
    expect(intake.events.map((e) => [e.type, e.providerEventId])).toEqual([["delayed", `smtp:${MESSAGE_ID}:delayed`]]);
  });

  it("keeps a noted report even when the message's handoff is not known under its provider yet", async () => {
    const { reports, intake, store, inbound } = setup();
    intake.known = false;
    expect(await reports.receiveInbound(inbound(dsn("delayed", "4.4.1")))).toEqual(["noted"]);
    expect(store.kept.map((k) => k.kind)).toEqual(["delayed"]);
  });

  it("asks the sender to retry a status change the message is not ready for, keeping nothing", async () => {
    const { reports, intake, store, inbound } = setup();
    intake.known = false;
    expect(await reports.receiveInbound(inbound(dsn("failed", "5.1.1")))).toEqual(["retry_later"]);
    // Not handed over yet at all: no provider message id to report against.
    const notHandedOver = setup();
    notHandedOver.store.messages.set(MESSAGE_ID, { ...MESSAGE, providerMessageId: null });
    expect(await notHandedOver.reports.receiveInbound(notHandedOver.inbound(dsn("failed", "5.1.1")))).toEqual(["retry_later"]);
    expect(notHandedOver.intake.events).toEqual([]);
    expect([...store.kept, ...notHandedOver.store.kept]).toEqual([]);
  });

  it("fails loudly on an intake error other than an unknown message, so the sender retries", async () => {
    const { store, inbound, verp } = setup();
    const broken = new DeliveryReports({ verp, store, providerEvents: { report: async () => Promise.reject(new Error("database unavailable")) } });
    await expect(broken.receiveInbound(inbound(dsn("failed", "5.1.1")))).rejects.toThrow("database unavailable");
  });

  it("trusts no report quoting another message than its return path names, and keeps it with the named message", async () => {
    const { reports, intake, store, inbound } = setup();
    const quoting = inbound(dsn("failed", "5.1.1", { originalMessageId: `<${OTHER_MESSAGE_ID}@mail.service.test>` }));
    expect(await reports.receiveInbound(quoting)).toEqual(["unmatched"]);
    expect(intake.events).toEqual([]);
    expect(store.kept.map((k) => [k.kind, k.reason, k.companyId, k.messageId])).toEqual([
      ["unmatched", "the report quotes another message than its return path names", COMPANY, MESSAGE_ID],
    ]);
  });

  it("keeps an auto-reply, a non-abuse feedback report and a report about a message gone, changing nothing", async () => {
    const { reports, intake, store, inbound, verp } = setup();
    expect(await reports.receiveInbound(inbound({ kind: "other", reason: "an auto-reply" }))).toEqual(["unmatched"]);
    expect(await reports.receiveInbound(inbound({ kind: "feedback", feedbackType: "not-spam" }))).toEqual(["unmatched"]);
    const gone = verp.addressFor(OTHER_MESSAGE_ID, "bounces.shop.example");
    expect(await reports.receiveInbound(inbound(dsn("failed", "5.1.1"), [gone]))).toEqual(["unmatched"]);
    expect(intake.events).toEqual([]);
    expect(store.kept.map((k) => [k.reason, k.messageId])).toEqual([
      ["an auto-reply", MESSAGE_ID],
      ['feedback type "not-spam" is not a complaint', MESSAGE_ID],
      ["the return path names no message", undefined],
    ]);
  });

  it("applies an abuse report as a complaint", async () => {
    const { reports, intake, inbound } = setup();
    expect(await reports.receiveInbound(inbound({ kind: "feedback", feedbackType: "Abuse", originalMessageId: MESSAGE.providerMessageId ?? "" }))).toEqual(["applied"]);
    expect(intake.events.map((e) => [e.type, e.providerEventId])).toEqual([["complained", `verp:${MESSAGE_ID}:complained`]]);
  });
});

describe("SES notifications", () => {
  const SES_MESSAGE: ReportedMessage = { ...MESSAGE, provider: "ses", providerMessageId: "0100018e-ses-id" };
  const notification = (overrides: Partial<SesNotificationCommand> = {}): SesNotificationCommand => ({
    notificationId: "sns-1",
    type: "Bounce",
    bounceType: "Permanent",
    sesMessageId: "0100018e-ses-id",
    occurredAt: RECEIVED,
    summary: { excerpt: "" },
    ...overrides,
  });
  function sesSetup() {
    const s = setup();
    s.store.messages.set(MESSAGE_ID, SES_MESSAGE);
    return s;
  }

  it("applies a permanent bounce once per SNS message: SNS's retry of it is a duplicate", async () => {
    const { reports, intake } = sesSetup();
    expect(await reports.receiveSes(notification({ detail: "550 user unknown" }))).toBe("applied");
    expect(await reports.receiveSes(notification({ detail: "550 user unknown" }))).toBe("duplicate");
    expect(intake.events[0]).toEqual({ providerEventId: "ses:sns-1", providerMessageId: "0100018e-ses-id", type: "bounced", occurredAt: RECEIVED, detail: "550 user unknown" });
  });

  it("finds the message under the provider it went through only", async () => {
    const { reports, store, intake } = setup();
    // The same provider id, but the message went out by SMTP.
    store.messages.set(MESSAGE_ID, { ...MESSAGE, providerMessageId: "0100018e-ses-id" });
    expect(await reports.receiveSes(notification())).toBe("unmatched");
    expect(intake.events).toEqual([]);
    expect(store.kept.map((k) => [k.source, k.kind, k.reason, k.messageId])).toEqual([["ses", "unmatched", "SES Bounce for an unknown message", undefined]]);
  });

  it("notes a transient bounce and a delay, and ignores the types that say nothing of delivery without reading anything", async () => {
    const { reports, store, intake } = sesSetup();
    expect(await reports.receiveSes(notification({ bounceType: "Transient" }))).toBe("noted");
    expect(await reports.receiveSes(notification({ notificationId: "sns-2", type: "DeliveryDelay", bounceType: undefined }))).toBe("noted");
    expect(store.kept.map((k) => k.kind)).toEqual(["soft_bounce", "delayed"]);
    expect(intake.events.map((e) => e.providerEventId)).toEqual(["ses:sns-1:delayed", "ses:sns-2:delayed"]);
    const before = store.kept.length;
    for (const type of ["Send", "Open", "Click", "RenderingFailure"]) expect(await reports.receiveSes(notification({ type }))).toBe("ignored");
    expect(store.kept).toHaveLength(before);
  });

  it("applies a Reject as `rejected` (its credit is returned downstream)", async () => {
    const { reports, intake } = sesSetup();
    expect(await reports.receiveSes(notification({ type: "Reject", bounceType: undefined }))).toBe("applied");
    expect(intake.events.map((e) => e.type)).toEqual(["rejected"]);
  });
});

describe("operators' list of kept reports", () => {
  async function problems(promise: Promise<unknown>): Promise<string[]> {
    const error = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).fields.map((f) => f.field);
  }

  it("lists 50 by default, up to 500, of one company and one kind when asked", async () => {
    const { reports, store } = setup();
    await reports.list({});
    await reports.list({ limit: 0 });
    await reports.list({ limit: 500, companyId: COMPANY, kind: "soft_bounce" });
    await reports.list({ companyId: "", kind: "" });
    expect(store.listed).toEqual([{ limit: 50 }, { limit: 50 }, { limit: 500, companyId: COMPANY, kind: "soft_bounce" }, { limit: 50 }]);
  });

  it("refuses a company id that is not one, a kind never kept and a limit past 500, naming each", async () => {
    const { reports, store } = setup();
    expect(await problems(reports.list({ companyId: "shop", kind: "rejected", limit: 501 }))).toEqual(["companyId", "kind", "limit"]);
    expect(await problems(reports.list({ limit: -1 }))).toEqual(["limit"]);
    expect(store.listed).toEqual([]);
  });
});
