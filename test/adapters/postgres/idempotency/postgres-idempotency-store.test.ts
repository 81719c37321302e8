import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresIdempotencyStore } from "../../../../src/adapters/postgres/idempotency/postgres-idempotency-store.ts";
import type { IdempotencyScope } from "../../../../src/capabilities/idempotency/index.ts";
import { poolOf } from "../../../../src/adapters/postgres/sql.ts";
import { asOperator, type Harness, openHarness } from "../../../capabilities/accounts/harness.ts";

const RPC = "mail.v1.MailService/SendMessage";
/** Lease of the claims in these tests, in seconds. */
const LEASE = 30;
const IN_PROGRESS = { kind: "in_progress", leaseSecondsLeft: expect.any(Number) };

function hash(body: string): Uint8Array {
  return createHash("sha256").update(body).digest();
}

describe("PostgresIdempotencyStore", () => {
  let h: Harness;
  // Two "API processes" on one database.
  let storeA: PostgresIdempotencyStore;
  let storeB: PostgresIdempotencyStore;
  let keyId: string;
  let otherKeyId: string;

  beforeAll(async () => {
    h = await openHarness();
    const other = await h.openProcess();
    storeA = new PostgresIdempotencyStore(poolOf(h.orm), { windowHours: 24, cleanupEveryMs: 0 });
    storeB = new PostgresIdempotencyStore(poolOf(other.orm), { windowHours: 24, cleanupEveryMs: 0 });
    const company = await h.accounts.companies.create({ name: "Acme" });
    keyId = (await h.accounts.keys.create(asOperator({ companyId: company.id, name: "a", scopes: ["mail.transactional.send"] }))).key.id;
    otherKeyId = (await h.accounts.keys.create(asOperator({ companyId: company.id, name: "b", scopes: ["mail.transactional.send"] }))).key.id;
  });

  afterAll(async () => {
    await storeA?.close();
    await storeB?.close();
    await h?.close();
  });

  function scope(overrides: Partial<IdempotencyScope> = {}): IdempotencyScope {
    return { apiKeyId: keyId, key: randomUUID(), rpc: RPC, requestHash: hash("body"), ...overrides };
  }

  it("claims once; the same request then finds it in progress, another body or RPC a mismatch", async () => {
    const s = scope();
    expect((await storeA.claim(s, LEASE)).kind).toBe("claimed");
    expect(await storeB.claim(s, LEASE)).toEqual(IN_PROGRESS);
    expect(await storeB.claim({ ...s, requestHash: hash("other body") }, LEASE)).toEqual({ kind: "mismatch" });
    expect(await storeB.claim({ ...s, rpc: "mail.v1.MailService/UpsertContact" }, LEASE)).toEqual({ kind: "mismatch" });
  });

  it("of concurrent claims from two processes exactly one wins", async () => {
    const s = scope();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? storeA : storeB).claim(s, LEASE)));
    expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
    expect(results.filter((r) => r.kind === "in_progress")).toHaveLength(19);
  });

  it("keeps a response or an error answer for replays", async () => {
    const s = scope();
    const claim = await storeA.claim(s, LEASE);
    if (claim.kind !== "claimed") throw new Error("expected a claim");
    const response = new Uint8Array([10, 3, 97, 98, 99]);
    expect(await storeA.complete(s, claim.token, { kind: "response", response, headers: { location: "/x" } })).toBe(true);
    expect(await storeB.claim(s, LEASE)).toEqual({ kind: "completed", answer: { kind: "response", response, headers: { location: "/x" } } });

    const e = scope();
    const errorClaim = await storeA.claim(e, LEASE);
    if (errorClaim.kind !== "claimed") throw new Error("expected a claim");
    await storeA.complete(e, errorClaim.token, { kind: "error", code: "NOT_FOUND", message: "No such template.", headers: {} });
    expect(await storeB.claim(e, LEASE)).toEqual({
      kind: "completed",
      answer: { kind: "error", code: "NOT_FOUND", message: "No such template.", headers: {} },
    });
  });

  it("a released claim can be claimed again", async () => {
    const s = scope();
    const claim = await storeA.claim(s, LEASE);
    if (claim.kind !== "claimed") throw new Error("expected a claim");
    await storeA.release(s, claim.token);
    expect((await storeB.claim(s, LEASE)).kind).toBe("claimed");
  });

  it("records are per API key", async () => {
    const s = scope();
    expect((await storeA.claim(s, LEASE)).kind).toBe("claimed");
    expect((await storeA.claim({ ...s, apiKeyId: otherKeyId }, LEASE)).kind).toBe("claimed");
  });

  it("an expired record is taken over (by exactly one of concurrent requests), even with another body", async () => {
    const s = scope();
    const claim = await storeA.claim(s, LEASE);
    if (claim.kind !== "claimed") throw new Error("expected a claim");
    await storeA.complete(s, claim.token, { kind: "response", response: new Uint8Array([1]), headers: {} });
    await h.db.query(`update idempotency_record set expires_at = now() - interval '1 second' where idempotency_key = $1`, [s.key]);

    const next = { ...s, requestHash: hash("new body") };
    expect((await storeA.inspect(next)).kind).toBe("absent");
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? storeA : storeB).claim(next, LEASE)));
    expect(results.filter((r) => r.kind === "claimed")).toHaveLength(1);
    // In progress again, under the lease of the new claim (not the window).
    const row = await h.db.query<{ state: string; response: Buffer | null; leased: boolean }>(
      `select state, response, expires_at between now() and now() + make_interval(secs => $2) as leased
         from idempotency_record where idempotency_key = $1`,
      [s.key, LEASE],
    );
    expect(row.rows[0]).toEqual({ state: "in_progress", response: null, leased: true });
  });

  it("a claim is leased: a twin is told the seconds left; once answered, the record is kept for the window", async () => {
    const s = scope();
    const claim = await storeA.claim(s, 20);
    if (claim.kind !== "claimed") throw new Error("expected a claim");
    const twin = await storeB.claim(s, LEASE);
    if (twin.kind !== "in_progress") throw new Error("expected the claim in progress");
    expect(twin.leaseSecondsLeft).toBeGreaterThanOrEqual(19);
    expect(twin.leaseSecondsLeft).toBeLessThanOrEqual(20);

    await storeA.complete(s, claim.token, { kind: "response", response: new Uint8Array([1]), headers: {} });
    const row = await h.db.query<{ hours: string }>(
      `select round(extract(epoch from (expires_at - now())) / 3600) as hours from idempotency_record where idempotency_key = $1`,
      [s.key],
    );
    expect(row.rows[0]?.hours).toBe("24");
  });

  it("a claim past its lease is taken over (its request died); its first owner can then neither store nor drop the record", async () => {
    const s = scope();
    const first = await storeA.claim(s, LEASE);
    if (first.kind !== "claimed") throw new Error("expected a claim");
    expect((await storeB.claim(s, LEASE)).kind).toBe("in_progress");
    // The lease ends (the request that holds it never answers nor releases).
    await h.db.query(`update idempotency_record set expires_at = now() - interval '1 millisecond' where idempotency_key = $1`, [s.key]);
    expect((await storeB.inspect(s)).kind).toBe("absent");

    const second = await storeB.claim(s, LEASE);
    if (second.kind !== "claimed") throw new Error("expected the abandoned claim to be taken over");
    expect(await storeA.complete(s, first.token, { kind: "response", response: new Uint8Array([1]), headers: {} })).toBe(false);
    await storeA.release(s, first.token);
    expect(await storeA.claim(s, LEASE)).toEqual(IN_PROGRESS);
    expect(await storeB.complete(s, second.token, { kind: "response", response: new Uint8Array([2]), headers: {} })).toBe(true);
  });

  it("a claim within its lease is not taken over, however old", async () => {
    const s = scope();
    expect((await storeA.claim(s, LEASE)).kind).toBe("claimed");
    await h.db.query(`update idempotency_record set created_at = now() - interval '10 minutes' where idempotency_key = $1`, [s.key]);
    expect(await storeB.claim(s, LEASE)).toEqual(IN_PROGRESS);
  });

  it("cleanup deletes expired records only", async () => {
    const live = scope();
    const expired = scope();
    await storeA.claim(live, LEASE);
    await storeA.claim(expired, LEASE);
    await h.db.query(`update idempotency_record set expires_at = now() - interval '1 minute' where idempotency_key = $1`, [expired.key]);
    expect(await storeA.cleanup()).toBeGreaterThanOrEqual(1);
    const left = await h.db.query<{ idempotency_key: string }>(
      `select idempotency_key from idempotency_record where idempotency_key = any($1)`,
      [[live.key, expired.key]],
    );
    expect(left.rows.map((r) => r.idempotency_key)).toEqual([live.key]);
  });
});
