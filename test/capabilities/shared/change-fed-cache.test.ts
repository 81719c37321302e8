import { describe, expect, it } from "vitest";
import { ChangeFedCache } from "../../../src/capabilities/shared/change-fed-cache.ts";

/**
 * The cache under the key lookup and the sender check. Its invalidation and
 * time to live are walked in test/capabilities/accounts/cached-credentials.test.ts
 * through the key lookup; these are the rules that lookup does not reach:
 * off until the change feed is known to work, off at a time to live of 0,
 * and a bounded size that lets the oldest value go first.
 */

/** A read that counts how often the source was asked, answering `key:<n>` for its n-th read. */
function source() {
  const reads: string[] = [];
  return {
    reads,
    read: (key: string) => async () => {
      reads.push(key);
      return `${key}:${reads.length}`;
    },
  };
}

describe("ChangeFedCache", () => {
  it("reads through until it is told the change feed works: a lost notification cannot keep a stale value", async () => {
    const s = source();
    const cache = new ChangeFedCache<string>();
    expect(await cache.get("a", s.read("a"))).toBe("a:1");
    expect(await cache.get("a", s.read("a"))).toBe("a:2");
    cache.setEnabled(true);
    expect(await cache.get("a", s.read("a"))).toBe("a:3");
    expect(await cache.get("a", s.read("a"))).toBe("a:3");
  });

  it("is off with a time to live of 0, even with the feed working", async () => {
    const s = source();
    const cache = new ChangeFedCache<string>({ ttlMs: 0, enabled: true });
    await cache.get("a", s.read("a"));
    await cache.get("a", s.read("a"));
    expect(s.reads).toEqual(["a", "a"]);
  });

  it("keeps at most maxEntries values, letting the oldest go first", async () => {
    const s = source();
    const cache = new ChangeFedCache<string>({ maxEntries: 2, enabled: true });
    await cache.get("a", s.read("a"));
    await cache.get("b", s.read("b"));
    await cache.get("c", s.read("c"));
    expect(s.reads).toEqual(["a", "b", "c"]);
    // b and c are still cached; a went to make room for c.
    expect(await cache.get("b", s.read("b"))).toBe("b:2");
    expect(await cache.get("c", s.read("c"))).toBe("c:3");
    expect(await cache.get("a", s.read("a"))).toBe("a:4");
    expect(s.reads).toEqual(["a", "b", "c", "a"]);
  });

  it("keeps only what `keep` accepts, and a value no longer than its time to live from when it was read", async () => {
    let now = 1_000;
    const s = source();
    const cache = new ChangeFedCache<string>({ ttlMs: 500, now: () => now, enabled: true });
    const notKept = () => false;
    await cache.get("missing", s.read("missing"), notKept);
    await cache.get("missing", s.read("missing"), notKept);
    expect(s.reads).toEqual(["missing", "missing"]);

    await cache.get("a", s.read("a"));
    now = 1_499;
    expect(await cache.get("a", s.read("a"))).toBe("a:3");
    now = 1_500;
    expect(await cache.get("a", s.read("a"))).toBe("a:4");
  });

  it("does not keep a read that overlapped its switching off, nor one that overlapped a switch back on", async () => {
    const cache = new ChangeFedCache<string>({ enabled: true });
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    const pending = cache.get("a", async () => {
      await held;
      return "stale";
    });
    // The feed drops and comes back while the read is on its way: the value may predate a change missed meanwhile.
    cache.setEnabled(false);
    cache.setEnabled(true);
    release();
    expect(await pending).toBe("stale");
    expect(await cache.get("a", async () => "fresh")).toBe("fresh");
  });
});
