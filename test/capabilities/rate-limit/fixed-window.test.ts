import { describe, expect, it } from "vitest";
import type { RateLimitWindows, WindowCount } from "../../../src/capabilities/rate-limit/ports.ts";
import { FixedWindowRateLimiter } from "../../../src/capabilities/rate-limit/rate-limiter.ts";

/**
 * The limiter's arithmetic over windows whose count and time left the test
 * sets: what the x-ratelimit-* and retry-after headers will say. The shared
 * count between processes is test/adapters/postgres/rate-limit's subject.
 */

/** Windows that count per bucket; the time left in the window is whatever the test sets. */
class FakeWindows implements RateLimitWindows {
  readonly counts = new Map<string, number>();
  resetMs = 30_000;
  closed = false;

  async add(bucket: string): Promise<WindowCount> {
    const count = (this.counts.get(bucket) ?? 0) + 1;
    this.counts.set(bucket, count);
    return { count, resetMs: this.resetMs };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

describe("FixedWindowRateLimiter", () => {
  it("allows exactly the limit in a window, counting down what remains, and refuses the next with a retry-after", async () => {
    const windows = new FakeWindows();
    const limiter = new FixedWindowRateLimiter(windows);
    const decisions = [];
    for (let n = 0; n < 5; n++) decisions.push(await limiter.consume({ bucket: "key:default", limitPerMinute: 3 }));
    expect(decisions).toEqual([
      { allowed: true, limit: 3, remaining: 2, resetSeconds: 30, retryAfterSeconds: 0 },
      { allowed: true, limit: 3, remaining: 1, resetSeconds: 30, retryAfterSeconds: 0 },
      { allowed: true, limit: 3, remaining: 0, resetSeconds: 30, retryAfterSeconds: 0 },
      // Refused requests count too, and remaining never goes below 0.
      { allowed: false, limit: 3, remaining: 0, resetSeconds: 30, retryAfterSeconds: 30 },
      { allowed: false, limit: 3, remaining: 0, resetSeconds: 30, retryAfterSeconds: 30 },
    ]);
    expect(windows.counts.get("key:default")).toBe(5);
  });

  it("gives the reset in whole seconds rounded up, from 1 to 60: never a retry after 0 s, never past the minute", async () => {
    const windows = new FakeWindows();
    const limiter = new FixedWindowRateLimiter(windows);
    const cases: [resetMs: number, seconds: number][] = [
      [0, 1],
      [1, 1],
      [999, 1],
      [1_000, 1],
      [1_001, 2],
      [59_001, 60],
      [60_000, 60],
      // A store whose clock stepped back must not promise a reset further away than one window.
      [90_000, 60],
      [-5, 1],
    ];
    for (const [resetMs, seconds] of cases) {
      windows.resetMs = resetMs;
      const refused = await limiter.consume({ bucket: `full-${resetMs}`, limitPerMinute: 1 }).then(() => limiter.consume({ bucket: `full-${resetMs}`, limitPerMinute: 1 }));
      expect([resetMs, refused.allowed, refused.resetSeconds, refused.retryAfterSeconds]).toEqual([resetMs, false, seconds, seconds]);
    }
  });

  it("keeps each bucket's budget apart: one key's conversions do not spend its default budget", async () => {
    const limiter = new FixedWindowRateLimiter(new FakeWindows());
    expect((await limiter.consume({ bucket: "key-1:conversions", limitPerMinute: 1 })).allowed).toBe(true);
    expect((await limiter.consume({ bucket: "key-1:conversions", limitPerMinute: 1 })).allowed).toBe(false);
    expect((await limiter.consume({ bucket: "key-1:default", limitPerMinute: 1 })).allowed).toBe(true);
    expect((await limiter.consume({ bucket: "key-2:conversions", limitPerMinute: 1 })).allowed).toBe(true);
  });

  it("judges the count against the limit of this request: a raised limit lets the same window go on", async () => {
    const limiter = new FixedWindowRateLimiter(new FakeWindows());
    await limiter.consume({ bucket: "b", limitPerMinute: 2 });
    await limiter.consume({ bucket: "b", limitPerMinute: 2 });
    expect(await limiter.consume({ bucket: "b", limitPerMinute: 2 })).toMatchObject({ allowed: false, remaining: 0 });
    expect(await limiter.consume({ bucket: "b", limitPerMinute: 10 })).toMatchObject({ allowed: true, limit: 10, remaining: 6 });
  });

  it("refuses an empty bucket and a limit that is not a positive integer, counting nothing", async () => {
    const windows = new FakeWindows();
    const limiter = new FixedWindowRateLimiter(windows);
    await expect(limiter.consume({ bucket: "", limitPerMinute: 10 })).rejects.toThrow(/bucket must not be empty/);
    for (const limitPerMinute of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(limiter.consume({ bucket: "b", limitPerMinute })).rejects.toThrow(/rate limit must be a positive integer/);
    }
    expect(windows.counts.size).toBe(0);
  });

  it("closes its windows' store", async () => {
    const windows = new FakeWindows();
    await new FixedWindowRateLimiter(windows).close();
    expect(windows.closed).toBe(true);
  });
});
