import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { FEED_APPLICATION_NAME, listenForCredentialChanges, type CredentialChangeFeed } from "../../../src/adapters/postgres/accounts/credential-changes.ts";
import { PostgresApiKeyCredentials } from "../../../src/adapters/postgres/accounts/postgres-api-key-credentials.ts";
import { PostgresKeyUsageStore } from "../../../src/adapters/postgres/accounts/postgres-key-usage-store.ts";
import { poolOf } from "../../../src/adapters/postgres/sql.ts";
import { CachedApiKeyCredentials } from "../../../src/capabilities/accounts/cached-credentials.ts";
import type { ApiKeyCredentials, KeyCredential } from "../../../src/capabilities/accounts/ports.ts";
import { asOperator, openHarness, TEST_CONFIG, type Harness } from "./harness.ts";

/** Credentials that count their reads and answer what the test says. */
class CountingCredentials implements ApiKeyCredentials {
  reads = 0;
  answer: KeyCredential | null = null;
  /** Held reads: the test releases them. */
  hold: Promise<void> | undefined;

  async findByHash(): Promise<KeyCredential | null> {
    this.reads++;
    const answer = this.answer;
    await this.hold;
    return answer;
  }
}

const KEY: KeyCredential = {
  id: "key-1",
  name: "k",
  prefix: "tml_abcdefgh",
  scopes: ["mail.events.read"],
  secretHash: Buffer.alloc(32, 1),
  expiresAt: null,
  revokedAt: null,
  company: { id: "company-1", name: "Co", entitlements: { api: true, smtp: false } },
};
const HASH = Buffer.alloc(32, 1);

describe("the key lookup cache", () => {
  it("reads a key once while it is fresh, and again after its time to live", async () => {
    let now = 0;
    const inner = new CountingCredentials();
    inner.answer = KEY;
    const cache = new CachedApiKeyCredentials(inner, { ttlMs: 1_000, now: () => now, enabled: true });
    expect(await cache.findByHash(HASH)).toBe(KEY);
    expect(await cache.findByHash(HASH)).toBe(KEY);
    expect(inner.reads).toBe(1);
    now = 1_000;
    await cache.findByHash(HASH);
    expect(inner.reads).toBe(2);
  });

  it("forgets everything when told of a change, and caches nothing while changes may go unheard", async () => {
    const inner = new CountingCredentials();
    inner.answer = KEY;
    const cache = new CachedApiKeyCredentials(inner, { enabled: true });
    await cache.findByHash(HASH);
    cache.invalidateAll();
    await cache.findByHash(HASH);
    expect(inner.reads).toBe(2);

    cache.setEnabled(false);
    await cache.findByHash(HASH);
    await cache.findByHash(HASH);
    expect(inner.reads).toBe(4);
  });

  it("never caches an unknown key", async () => {
    const inner = new CountingCredentials();
    const cache = new CachedApiKeyCredentials(inner, { enabled: true });
    expect(await cache.findByHash(HASH)).toBeNull();
    expect(await cache.findByHash(HASH)).toBeNull();
    expect(inner.reads).toBe(2);
  });

  it("does not keep a read that a change overtook", async () => {
    const inner = new CountingCredentials();
    inner.answer = KEY;
    const cache = new CachedApiKeyCredentials(inner, { enabled: true });
    let release = () => {};
    inner.hold = new Promise((resolve) => (release = resolve));
    const pending = cache.findByHash(HASH);
    // The key changes while its (now outdated) row is on its way.
    cache.invalidateAll();
    release();
    await pending;
    inner.hold = undefined;
    await cache.findByHash(HASH);
    expect(inner.reads).toBe(2);
  });
});

describe("key changes heard through PostgreSQL", () => {
  let h: Harness;
  let feed: CredentialChangeFeed | undefined;
  const heard = { changes: 0, listening: false };

  beforeAll(async () => {
    h = await openHarness();
  });
  afterAll(async () => {
    await feed?.close();
    await h?.close();
  });

  async function listening(): Promise<void> {
    await vi.waitFor(() => expect(heard.listening).toBe(true), { timeout: 10_000, interval: 20 });
  }

  it("a process that cached a key hears its revocation by another process, and refuses it", async () => {
    const reads = new CountingCredentials();
    const real = new PostgresApiKeyCredentials(poolOf(h.orm));
    const counted: ApiKeyCredentials = {
      async findByHash(hash) {
        reads.reads++;
        return real.findByHash(hash);
      },
    };
    const cache = new CachedApiKeyCredentials(counted);
    feed = listenForCredentialChanges(poolOf(h.orm), {
      changed: () => {
        heard.changes++;
        cache.invalidateAll();
      },
      listening: (on) => {
        heard.listening = on;
        cache.setEnabled(on);
      },
    });
    await listening();

    const company = await h.accounts.companies.create({ name: "Heard GmbH" });
    const { key, secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const hash = createHmac("sha256", TEST_CONFIG.apiKeyPepper).update(secret, "utf8").digest();
    await cache.findByHash(hash);
    await cache.findByHash(hash);
    expect(reads.reads).toBe(1);

    // "Last used" writes change nothing that matters: they are not announced.
    await new PostgresKeyUsageStore(poolOf(h.orm)).writeLastUsed(new Map([[key.id, new Date()]]));
    const before = heard.changes;
    // Another process revokes it (this cache is not told directly).
    const other = await h.openProcess();
    await other.accounts.keys.revoke(asOperator({ companyId: company.id, keyId: key.id }));
    await vi.waitFor(async () => expect((await cache.findByHash(hash))?.revokedAt).not.toBeNull(), { timeout: 10_000, interval: 20 });
    // Notices arrive in commit order: had the usage write notified, two would have arrived.
    expect(heard.changes - before).toBe(1);
  });

  it("while its connection is lost nothing is cached, and it comes back by itself", async () => {
    await listening();
    await h.db.query(`select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 and datname = current_database()`, [
      FEED_APPLICATION_NAME,
    ]);
    await vi.waitFor(() => expect(heard.listening).toBe(false), { timeout: 10_000, interval: 20 });
    await listening();
  });
});
