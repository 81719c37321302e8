import { MockActivityEnvironment } from "@temporalio/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMessageActivities } from "../../../../src/adapters/temporal/messages/activities.ts";
import type { EmailProvider, HandoffResult } from "../../../../src/capabilities/messages/email-provider.ts";
import { MessageLifecycle } from "../../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import { type LifecycleHarness, OPEN_PACE, startLifecycleHarness, TestCredits, TestSuppressions } from "./harness.ts";

/** An email service that answers only when the test lets it. */
function heldProvider(): EmailProvider & { answer(result: HandoffResult): void; waiting(): boolean } {
  let release: ((result: HandoffResult) => void) | undefined;
  return {
    name: "held",
    send: () => new Promise<HandoffResult>((resolve) => (release = resolve)),
    answer: (result) => release?.(result),
    waiting: () => release !== undefined,
    async close() {},
  };
}

describe("a handoff that waits on the email service", () => {
  let h: LifecycleHarness;

  beforeAll(async () => {
    h = await startLifecycleHarness();
  });
  afterAll(async () => h?.close());

  it("heartbeats the Temporal activity until the service answers, and stops after", async () => {
    const provider = heldProvider();
    const lifecycle = new MessageLifecycle({
      store: h.store,
      provider,
      credits: new TestCredits(),
      suppressions: new TestSuppressions(),
      signingKeys: { resolveSender: async () => ({ dkim: { domainName: "shop.example", keySelector: "mail", privateKey: "" } }) },
      pace: OPEN_PACE,
      heartbeatEveryMs: 20,
    });
    const activities = createMessageActivities({ lifecycle });
    const { companyId, messageId } = await h.queue("someone@customer.example");

    const environment = new MockActivityEnvironment();
    let heartbeats = 0;
    environment.on("heartbeat", () => heartbeats++);
    const attempt = environment.run(activities.attemptHandOff, companyId, messageId, provider.name);

    await expect.poll(() => provider.waiting()).toBe(true);
    await expect.poll(() => heartbeats).toBeGreaterThanOrEqual(3);
    provider.answer({ outcome: "accepted", providerMessageId: "held-1" });
    expect(await attempt).toEqual({ status: "sent", waitMs: 0 });

    const afterwards = heartbeats;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(heartbeats).toBe(afterwards);
  });
});
