import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ChangeFeed } from "../../../../src/adapters/postgres/change-feed.ts";
import { listenForSenderChanges } from "../../../../src/adapters/postgres/sending-setup/sender-changes.ts";
import { migrate, openOrm, type MikroORM } from "../../../../src/adapters/postgres/orm.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { CachedSenderDirectory } from "../../../../src/capabilities/messages/accept/cached-senders.ts";
import type { ResolvedSenderInfo, SenderDirectoryPort } from "../../../../src/capabilities/messages/accept/ports.ts";
import { ApiError } from "../../../../src/contract/api-error.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

/** A directory that counts its checks and answers what the test says. */
class CountingDirectory implements SenderDirectoryPort {
  checks = 0;
  answer: ResolvedSenderInfo | Error = { senderId: "sender-1", email: "hello@shop.example" };

  async checkSender(): Promise<ResolvedSenderInfo> {
    this.checks++;
    if (this.answer instanceof Error) throw this.answer;
    return this.answer;
  }
}

describe("cached sender checks", () => {
  it("checks a company's sender once while fresh, per sender id, and again after the time to live", async () => {
    let now = 0;
    const inner = new CountingDirectory();
    const cache = new CachedSenderDirectory(inner, { ttlMs: 1_000, now: () => now });
    cache.setEnabled(true);
    await cache.checkSender("company-1");
    await cache.checkSender("company-1", "");
    expect(inner.checks).toBe(1);
    await cache.checkSender("company-1", "sender-2");
    await cache.checkSender("company-2");
    expect(inner.checks).toBe(3);
    now = 1_000;
    await cache.checkSender("company-1");
    expect(inner.checks).toBe(4);
  });

  it("never keeps a refusal, keeps nothing while changes may go unheard, and forgets on a change", async () => {
    const inner = new CountingDirectory();
    const cache = new CachedSenderDirectory(inner);
    await cache.checkSender("company-1");
    await cache.checkSender("company-1");
    expect(inner.checks).toBe(2);

    cache.setEnabled(true);
    inner.answer = new ApiError("SENDER_NOT_VERIFIED", "not verified");
    await expect(cache.checkSender("company-1")).rejects.toThrow("not verified");
    await expect(cache.checkSender("company-1")).rejects.toThrow("not verified");
    expect(inner.checks).toBe(4);

    inner.answer = { senderId: "sender-1", email: "hello@shop.example" };
    await cache.checkSender("company-1");
    cache.invalidateAll();
    await cache.checkSender("company-1");
    expect(inner.checks).toBe(6);
  });
});

describe("sender changes heard through PostgreSQL", () => {
  let db: TestDatabase;
  let orm: MikroORM;
  let feed: ChangeFeed | undefined;
  const heard = { changes: 0, listening: false };

  beforeAll(async () => {
    db = await createTestDatabase();
    orm = await openOrm(db.url, { poolMax: 2 });
    await migrate(orm);
  });
  afterAll(async () => {
    await feed?.close();
    await orm?.close();
    await db?.drop();
  });

  it("a sender or domain written anywhere empties the cache; other tables do not", async () => {
    feed = listenForSenderChanges(poolOf(orm), {
      changed: () => heard.changes++,
      listening: (on) => (heard.listening = on),
    });
    await vi.waitFor(() => expect(heard.listening).toBe(true), { timeout: 10_000, interval: 20 });
    const start = heard.changes;

    const { rows } = await db.query<{ id: string }>(`insert into company (name) values ('Heard Ltd') returning id`);
    const companyId = rows[0]?.id ?? "";
    const domain = await db.query<{ id: string }>(
      `insert into sending_domain (company_id, domain, return_path_domain, dkim_selector, dkim_public_key, dkim_private_key_sealed)
       values ($1, 'heard.example', 'bounces.heard.example', 'mail', 'pk', 'sealed') returning id`,
      [companyId],
    );
    const domainId = domain.rows[0]?.id ?? "";
    // A new domain alone changes no sender's check: not announced.
    await db.query(`insert into sender (company_id, domain_id, email, is_default) values ($1, $2, 'hello@heard.example', true)`, [
      companyId,
      domainId,
    ]);
    await vi.waitFor(() => expect(heard.changes - start).toBe(1), { timeout: 10_000, interval: 20 });
    await db.query(`update sending_domain set verification_overridden = true where id = $1`, [domainId]);
    await vi.waitFor(() => expect(heard.changes - start).toBe(2), { timeout: 10_000, interval: 20 });
    await db.query(`delete from sender where company_id = $1`, [companyId]);
    await vi.waitFor(() => expect(heard.changes - start).toBe(3), { timeout: 10_000, interval: 20 });
  });
});
