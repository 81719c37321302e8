import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSimulatorProvider, type SimulatorProvider } from "../../../../src/adapters/email/simulator.ts";
import { postgresHandoffJournal } from "../../../../src/adapters/postgres/messages/handoff-journal.ts";
import type { ProviderEvent } from "../../../../src/capabilities/messages/email-provider.ts";
import type { MessageLifecycle } from "../../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import { type LifecycleHarness, startLifecycleHarness, TestCredits, TestSuppressions } from "./harness.ts";

/**
 * The simulator plays an outside email service: what it accepted, and the
 * outcomes it will report, must outlive the worker that handed the message
 * over (they live in its PostgreSQL journal).
 */
describe("the simulator's outcomes survive the process that accepted the message", () => {
  let h: LifecycleHarness;
  const started: SimulatorProvider[] = [];
  /** Every report any worker made. */
  const everything: ProviderEvent[] = [];

  beforeAll(async () => {
    h = await startLifecycleHarness();
  });
  afterAll(async () => {
    for (const provider of started) await provider.close();
    await h?.close();
  });

  /** One worker: a simulator on the shared journal, reporting into its own lifecycle. */
  function worker(delayMs: number): { provider: SimulatorProvider; lifecycle: MessageLifecycle; reported: ProviderEvent[] } {
    const reported: ProviderEvent[] = [];
    const late: { lifecycle?: MessageLifecycle } = {};
    const provider = createSimulatorProvider({
      journal: postgresHandoffJournal(h.pool),
      delayMs,
      pollIntervalMs: 100,
      async onEvent(event) {
        const applied = await late.lifecycle?.applyProviderEvent(event);
        if (!applied) throw new Error(`no message for ${event.providerMessageId} yet`);
        reported.push(event);
        everything.push(event);
      },
    });
    started.push(provider);
    late.lifecycle = h.lifecycle(provider, { credits: new TestCredits(), suppressions: new TestSuppressions() });
    return { provider, lifecycle: late.lifecycle, reported };
  }

  async function status(companyId: string, messageId: string): Promise<string | undefined> {
    return (await h.store.load(companyId, messageId))?.status;
  }

  it("a worker stopped before the outcomes are due: a new one reports them, in order", async () => {
    // Due 2 s after the handoff (and the complaint 2 s after the delivery): the first worker is long gone by then.
    const first = worker(2_000);
    const { companyId, messageId } = await h.queue("complaint@customer.example");
    expect(await first.lifecycle.handOff({ companyId, messageId })).toBe("sent");
    await first.provider.close();

    const second = worker(2_000);
    await expect.poll(() => status(companyId, messageId), { timeout: 15_000, interval: 100 }).toBe("complained");
    const events = await h.db.query<{ type: string }>(`select type from message_event where message_id = $1 order by at, id`, [messageId]);
    expect(events.rows.map((r) => r.type)).toEqual(["sent", "delivery", "complaint"]);
    expect(first.reported).toEqual([]);
    expect(second.reported.map((e) => e.type)).toEqual(["delivered", "complained"]);
  });

  it("two live workers report each outcome once between them", async () => {
    const a = worker(50);
    const b = worker(50);
    const messages = [];
    for (let i = 0; i < 10; i++) {
      const message = await h.queue(`someone+${i}@customer.example`);
      expect(await (i % 2 === 0 ? a : b).lifecycle.handOff(message)).toBe("sent");
      messages.push(message);
    }
    for (const { companyId, messageId } of messages) {
      await expect.poll(() => status(companyId, messageId), { timeout: 15_000, interval: 100 }).toBe("delivered");
    }
    // Every worker still running polls the same journal (the one of the test above too).
    const ours = new Set<string>();
    for (const { companyId, messageId } of messages) ours.add((await h.store.load(companyId, messageId))?.providerMessageId ?? "");
    const reported = everything.filter((e) => ours.has(e.providerMessageId)).map((e) => e.providerEventId);
    expect(reported).toHaveLength(10);
    expect(new Set(reported).size).toBe(10);
    expect(a.reported.length + b.reported.length).toBeGreaterThan(0);
  });
});
