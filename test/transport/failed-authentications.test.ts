import { describe, expect, it } from "vitest";
import { addressKey, FailedAuthentications } from "../../src/transport/http/failed-authentications.ts";

function clock(start = 1_000_000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

describe("FailedAuthentications", () => {
  it("refuses an address once it used up its failures, until its window ends", () => {
    const time = clock();
    const failures = new FailedAuthentications({ maxFailures: 3, windowMs: 60_000, now: time.now });
    for (let i = 0; i < 3; i += 1) {
      expect(failures.retryAfterSeconds("203.0.113.7")).toBe(0);
      failures.recordFailure("203.0.113.7");
    }
    expect(failures.retryAfterSeconds("203.0.113.7")).toBe(60);
    expect(failures.retryAfterSeconds("203.0.113.8")).toBe(0);
    time.advance(59_500);
    expect(failures.retryAfterSeconds("203.0.113.7")).toBe(1);
    time.advance(500);
    expect(failures.retryAfterSeconds("203.0.113.7")).toBe(0);
  });

  it("remembers a bounded number of addresses, forgetting the oldest", () => {
    const failures = new FailedAuthentications({ maxFailures: 1, maxAddresses: 100 });
    for (let i = 0; i < 1_000; i += 1) failures.recordFailure(`10.0.${Math.floor(i / 256)}.${i % 256}`);
    expect(failures.size).toBe(100);
    expect(failures.retryAfterSeconds("10.0.0.0")).toBe(0);
    expect(failures.retryAfterSeconds("10.0.3.231")).toBeGreaterThan(0);
  });

  it("counts IPv6 clients per /64 and IPv4-mapped addresses as IPv4", () => {
    expect(addressKey("2001:db8:1:2:aaaa::1")).toBe(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"));
    expect(addressKey("2001:db8:1:2::1")).not.toBe(addressKey("2001:db8:1:3::1"));
    expect(addressKey("::ffff:192.0.2.1")).toBe("192.0.2.1");
    expect(addressKey("::1")).toBe(addressKey("0:0:0:0:0:0:0:1"));

    const failures = new FailedAuthentications({ maxFailures: 2 });
    failures.recordFailure("2001:db8:1:2::10");
    failures.recordFailure("2001:db8:1:2::20");
    expect(failures.retryAfterSeconds("2001:db8:1:2:ffff::1")).toBeGreaterThan(0);
    expect(failures.retryAfterSeconds("2001:db8:1:3::1")).toBe(0);
  });
});
