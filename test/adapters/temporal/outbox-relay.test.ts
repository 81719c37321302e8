import { describe, expect, it } from "vitest";
import { OutboxRelay } from "../../../src/adapters/temporal/outbox-relay.ts";

/** A pass the test ends when it wants; `passes` counts the passes started. */
function heldPasses() {
  const held: Array<() => void> = [];
  let passes = 0;
  return {
    get passes() {
      return passes;
    },
    pass: () => {
      passes++;
      return new Promise<void>((resolve) => held.push(resolve));
    },
    /** Ends the oldest pass still running. */
    endOne: () => held.shift()?.(),
    running: () => held.length,
  };
}

const QUIET = { warn: () => {} };

describe("the outbox relay loop", () => {
  it("runs a pass on a wake-up; wake-ups during a pass make one more pass after it", async () => {
    const p = heldPasses();
    let wake = (): void => {};
    const relay = new OutboxRelay({
      pass: p.pass,
      intervalMs: 3_600_000,
      log: QUIET,
      failure: "pass failed",
      wakeUps: (w) => {
        wake = w;
        return { close: async () => {} };
      },
    });
    relay.kick();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.passes).toBe(0);
    relay.start();
    wake();
    await expect.poll(() => p.passes).toBe(1);
    relay.kick();
    relay.kick();
    wake();
    p.endOne();
    await expect.poll(() => p.passes).toBe(2);
    p.endOne();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.passes).toBe(2);
    await relay.close();
  });

  it("close() waits for the pass under way, closes the wake-ups, and runs no pass after", async () => {
    const p = heldPasses();
    let wakeUpsClosed = false;
    const relay = new OutboxRelay({
      pass: p.pass,
      intervalMs: 3_600_000,
      log: QUIET,
      failure: "pass failed",
      wakeUps: () => ({ close: async () => void (wakeUpsClosed = true) }),
    });
    relay.start();
    relay.kick();
    await expect.poll(() => p.running()).toBe(1);
    relay.kick();
    let closed = false;
    const closing = relay.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(closed).toBe(false);
    p.endOne();
    await closing;
    expect(wakeUpsClosed).toBe(true);
    relay.kick();
    relay.start();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(p.passes).toBe(1);
  });

  it("logs a failed pass and goes on with the next", async () => {
    const warnings: string[] = [];
    let passes = 0;
    const relay = new OutboxRelay({
      pass: async () => {
        passes++;
        if (passes === 1) throw new Error("database away");
      },
      intervalMs: 1,
      log: { warn: (_details, message) => void warnings.push(message) },
      failure: "outbox relay pass failed",
    });
    relay.start();
    await expect.poll(() => passes).toBeGreaterThanOrEqual(2);
    await relay.close();
    expect(warnings).toEqual(["outbox relay pass failed"]);
  });
});
