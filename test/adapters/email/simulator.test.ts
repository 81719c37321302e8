import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import {
  createSimulatorProvider,
  SIMULATOR_MAGIC_RECIPIENTS,
  simulatorBehaviourFor,
  type SimulatorProvider,
  type SimulatorProviderOptions,
} from "../../../src/adapters/email/simulator.ts";
import type { OutgoingEmail, ProviderEvent } from "../../../src/capabilities/messages/email-provider.ts";

function email(to: string, messageId: string = randomUUID()): OutgoingEmail {
  return {
    messageId,
    companyId: "company-1",
    from: { email: "orders@shop.example" },
    to: { email: to },
    subject: "Your receipt",
    html: "<p>Thanks</p>",
  };
}

describe("createSimulatorProvider", () => {
  let provider: SimulatorProvider | undefined;
  let events: ProviderEvent[];

  function start(options: Partial<SimulatorProviderOptions> = {}): SimulatorProvider {
    events = [];
    provider = createSimulatorProvider({
      onEvent: async (event) => {
        events.push(event);
      },
      delayMs: 5,
      slowDelayMs: 150,
      ...options,
    });
    return provider;
  }

  afterEach(async () => {
    await provider?.close();
    provider = undefined;
  });

  /** Accepted handoff, then exactly these event types for its providerMessageId. */
  async function expectAcceptedWithEvents(sim: SimulatorProvider, to: string, types: string[]): Promise<void> {
    const result = await sim.send(email(to));
    expect(result.outcome).toBe("accepted");
    if (result.outcome !== "accepted") return;
    expect(result.providerMessageId).toMatch(/^sim_/);
    await sim.settled();
    const mine = events.filter((event) => event.providerMessageId === result.providerMessageId);
    expect(mine.map((event) => event.type)).toEqual(types);
  }

  it("delivers delivered@ and any non-magic address", async () => {
    const sim = start();
    await expectAcceptedWithEvents(sim, "delivered@example.com", ["delivered"]);
    await expectAcceptedWithEvents(sim, "alice@customer.example", ["delivered"]);
  });

  it("bounces bounce@ and bounced@ after acceptance, with a reason", async () => {
    const sim = start();
    await expectAcceptedWithEvents(sim, "bounce@example.com", ["bounced"]);
    await expectAcceptedWithEvents(sim, "bounced@other.example", ["bounced"]);
    expect(events.every((event) => event.detail?.startsWith("550 5.1.1"))).toBe(true);
  });

  it("delivers then reports a complaint for complaint@ and complained@, in that order", async () => {
    const sim = start();
    await expectAcceptedWithEvents(sim, "complaint@example.com", ["delivered", "complained"]);
    await expectAcceptedWithEvents(sim, "complained@example.com", ["delivered", "complained"]);
    const [delivered, complained] = events;
    expect(complained && delivered && complained.occurredAt >= delivered.occurredAt).toBe(true);
  });

  it("rejects reject@ and rejected@ at handoff, permanently, without events or a send", async () => {
    const sim = start();
    for (const to of ["reject@example.com", "rejected@example.com"]) {
      const message = email(to);
      const result = await sim.send(message);
      expect(result).toEqual({ outcome: "rejected", permanent: true, reason: "550 5.7.1 simulated rejection" });
      // A repeat gets the same answer.
      expect(await sim.send(message)).toEqual(result);
      expect(sim.sentCount(message.messageId)).toBe(0);
    }
    await sim.settled();
    expect(events).toEqual([]);
  });

  it("fails transient@ once per messageId, then accepts the retry and delivers", async () => {
    const sim = start();
    const message = email("transient@example.com");

    const first = await sim.send(message);
    expect(first).toEqual({ outcome: "failed_transient", reason: "451 4.3.0 simulated transient failure" });
    expect(sim.sentCount(message.messageId)).toBe(0);

    const second = await sim.send(message);
    expect(second.outcome).toBe("accepted");
    expect(await sim.send(message)).toEqual(second);
    await sim.settled();

    expect(events.map((event) => event.type)).toEqual(["delivered"]);
    expect(sim.sentCount(message.messageId)).toBe(1);
    expect(sim.attemptCount(message.messageId)).toBe(3);

    // Another message to the same address fails its own first attempt too.
    expect((await sim.send(email("transient@example.com"))).outcome).toBe("failed_transient");
  });

  it("delivers slow@ only after slowDelayMs", async () => {
    const sim = start({ slowDelayMs: 150 });
    const result = await sim.send(email("slow@example.com"));
    expect(result.outcome).toBe("accepted");

    await sleep(50);
    expect(events).toEqual([]);
    await sim.settled();
    expect(events.map((event) => event.type)).toEqual(["delivered"]);
  });

  it("waits 5 seconds for slow@ by default", async () => {
    const sim = start({ slowDelayMs: undefined });
    await sim.send(email("slow@example.com"));
    await sleep(200);
    expect(events).toEqual([]);
    // close() drops the pending delivery instead of waiting for it.
    await sim.close();
    expect(events).toEqual([]);
  });

  it("answers a repeated messageId with the same result, without sending or emitting again", async () => {
    const sim = start();
    const message = email("delivered@example.com");

    const first = await sim.send(message);
    await sim.settled();
    const again = await sim.send(message);
    const concurrent = await Promise.all([sim.send(message), sim.send(message)]);
    await sim.settled();

    expect(again).toEqual(first);
    expect(concurrent).toEqual([first, first]);
    expect(events).toHaveLength(1);
    expect(sim.sentCount(message.messageId)).toBe(1);
    expect(sim.attemptCount(message.messageId)).toBe(4);
    expect(sim.sentCount(randomUUID())).toBe(0);
  });

  it("keeps at most memoryLimit messages in memory, forgetting the oldest first", async () => {
    const sim = start({ memoryLimit: 2 });
    const [a, b, c] = [email("delivered@example.com"), email("delivered@example.com"), email("delivered@example.com")];
    for (const message of [a, b, c]) await sim.send(message);
    await sim.settled();

    expect([a, b, c].map((m) => sim.sentCount(m.messageId))).toEqual([0, 1, 1]);
    expect([a, b, c].map((m) => sim.attemptCount(m.messageId))).toEqual([0, 1, 1]);
  });

  it("gives each event a unique id and each message its own providerMessageId", async () => {
    const sim = start();
    const results = await Promise.all([
      sim.send(email("complaint@example.com")),
      sim.send(email("complaint@example.com")),
      sim.send(email("delivered@example.com")),
    ]);
    await sim.settled();

    const providerIds = results.map((result) => (result.outcome === "accepted" ? result.providerMessageId : ""));
    expect(new Set(providerIds).size).toBe(3);
    expect(events).toHaveLength(5);
    expect(new Set(events.map((event) => event.providerEventId)).size).toBe(5);
  });

  it("matches magic local parts on any domain, case-insensitively, ignoring a +tag", () => {
    expect(simulatorBehaviourFor("BOUNCE@Example.COM")).toBe("bounce");
    expect(simulatorBehaviourFor("bounce+signup-test@example.com")).toBe("bounce");
    expect(simulatorBehaviourFor("reject@anything.test")).toBe("reject");
    expect(simulatorBehaviourFor("bouncer@example.com")).toBe("deliver");
    expect(simulatorBehaviourFor("someone@bounce.example")).toBe("deliver");
  });

  it("documents every behaviour in SIMULATOR_MAGIC_RECIPIENTS, consistently with the matcher", () => {
    const behaviours = new Set(SIMULATOR_MAGIC_RECIPIENTS.map((row) => row.behaviour));
    expect(behaviours).toEqual(new Set(["deliver", "bounce", "complain", "reject", "transient", "slow"]));
    for (const row of SIMULATOR_MAGIC_RECIPIENTS) {
      for (const localPart of row.localParts) expect(simulatorBehaviourFor(`${localPart}@x.test`)).toBe(row.behaviour);
    }
  });

  it("retries a failing sink with the same event, then stops", async () => {
    const calls: ProviderEvent[] = [];
    let failuresLeft = 2;
    const sim = start({
      eventRetryBaseMs: 1,
      onEvent: async (event) => {
        calls.push(event);
        if (failuresLeft-- > 0) throw new Error("sink down");
      },
    });

    await sim.send(email("delivered@example.com"));
    await sim.settled();

    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((event) => event.providerEventId)).size).toBe(1);
  });

  it("keeps retrying an outcome well past five failed calls: its message may be recorded late (a worker died after the handoff)", async () => {
    let calls = 0;
    const dropped: ProviderEvent[] = [];
    const sim = start({
      eventRetryBaseMs: 1,
      eventRetryMaxMs: 4,
      onEvent: async () => {
        // As the intake answers until the handoff's result is recorded.
        if (++calls <= 12) throw new Error("No message with provider message id sim_x.");
      },
      onEventDropped: (event) => dropped.push(event),
    });

    await sim.send(email("delivered@example.com"));
    await sim.settled();

    expect(calls).toBe(13);
    expect(dropped).toEqual([]);
  });

  it("drops an event after eventAttempts failed calls and says so", async () => {
    const dropped: ProviderEvent[] = [];
    let calls = 0;
    const sim = start({
      eventAttempts: 3,
      eventRetryBaseMs: 1,
      onEvent: async () => {
        calls++;
        throw new Error("sink down");
      },
      onEventDropped: (event) => dropped.push(event),
    });

    await sim.send(email("bounce@example.com"));
    await sim.settled();

    expect(calls).toBe(3);
    expect(dropped.map((event) => event.type)).toEqual(["bounced"]);
  });

  it("stops emitting on close and refuses later sends transiently", async () => {
    const sim = start({ delayMs: 100 });
    await sim.send(email("delivered@example.com"));
    await sim.close();
    await sleep(150);

    expect(events).toEqual([]);
    expect(await sim.send(email("delivered@example.com"))).toEqual({
      outcome: "failed_transient",
      reason: "provider is closed",
    });
  });
});
