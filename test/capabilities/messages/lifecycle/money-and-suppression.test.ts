import { randomUUID } from "node:crypto";
import { MockActivityEnvironment } from "@temporalio/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatorProvider } from "../../../../src/adapters/email/simulator.ts";
import { createMessageActivities } from "../../../../src/adapters/temporal/messages/activities.ts";
import { type LifecycleHarness, startLifecycleHarness, TestCredits, TestSuppressions } from "./harness.ts";

describe("a failure between two steps of a message's life is finished by the retry", () => {
  let h: LifecycleHarness;
  const provider = createSimulatorProvider({ onEvent: async () => undefined, delayMs: 60_000 });

  beforeAll(async () => {
    h = await startLifecycleHarness();
  });
  afterAll(async () => {
    await provider.close();
    await h?.close();
  });

  it("a rejected message gets its credit back even when the first refund fails", async () => {
    const credits = new TestCredits();
    const lifecycle = h.lifecycle(provider, { credits, suppressions: new TestSuppressions() });
    // What Temporal runs, and runs again after a failure.
    const activities = createMessageActivities({ lifecycle });
    const { companyId, messageId } = await h.queue("reject@customer.example");

    const attempt = () => new MockActivityEnvironment().run(activities.attemptHandOff, companyId, messageId, provider.name);

    credits.failRefunds = 1;
    await expect(attempt()).rejects.toThrow("credits store unavailable");
    expect((await h.store.load(companyId, messageId))?.status).toBe("rejected");
    expect(credits.refunded.has(messageId)).toBe(false);

    expect(await attempt()).toEqual({ status: "rejected", waitMs: 0 });
    expect(credits.charged.has(messageId)).toBe(true);
    expect(credits.refunded.has(messageId)).toBe(true);
  });

  it.each([
    ["bounced", "bounce"],
    ["complained", "complaint"],
  ] as const)("a %s report suppresses the address even when the first suppression fails", async (type, reason) => {
    const credits = new TestCredits();
    const suppressions = new TestSuppressions();
    const lifecycle = h.lifecycle(provider, { credits, suppressions });
    const { companyId, messageId } = await h.queue("someone@customer.example");
    expect(await lifecycle.handOff({ companyId, messageId })).toBe("sent");
    const providerMessageId = (await h.store.load(companyId, messageId))?.providerMessageId ?? "";

    const report = { providerEventId: `evt-${randomUUID()}`, providerMessageId, type, occurredAt: new Date() };
    suppressions.failSuppress = 1;
    // The email service gets an error and reports the same event again.
    await expect(lifecycle.applyProviderEvent(report)).rejects.toThrow("suppression list unavailable");
    await lifecycle.applyProviderEvent(report);

    expect(suppressions.suppressed.get(`${companyId}/someone@customer.example`)).toBe(reason);
    expect((await h.store.load(companyId, messageId))?.status).toBe(type);
    // Recorded once, however often it was reported.
    const events = await h.db.query(`select 1 from message_event where provider_event_id = $1`, [report.providerEventId]);
    expect(events.rowCount).toBe(1);
  });

  it("a report repeated after it was fully applied changes nothing", async () => {
    const suppressions = new TestSuppressions();
    const lifecycle = h.lifecycle(provider, { credits: new TestCredits(), suppressions });
    const { companyId, messageId } = await h.queue("twice@customer.example");
    await lifecycle.handOff({ companyId, messageId });
    const providerMessageId = (await h.store.load(companyId, messageId))?.providerMessageId ?? "";
    const report = { providerEventId: `evt-${randomUUID()}`, providerMessageId, type: "bounced" as const, occurredAt: new Date() };

    expect(await lifecycle.applyProviderEvent(report)).toMatchObject({ applied: true, status: "bounced" });
    // The address is taken off the list (e.g. by the company) before the service repeats its report.
    suppressions.suppressed.clear();
    expect(await lifecycle.applyProviderEvent(report)).toMatchObject({ applied: false, status: "bounced" });
    expect(suppressions.suppressed.size).toBe(0);
  });
});
