import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { generateApiKey, isWellFormedApiKey, SECRET_LENGTH } from "../../../src/capabilities/accounts/api-keys.ts";
import { API_KEY_SCOPES } from "../../../src/capabilities/accounts/scopes.ts";
import { asOperator, expectApiError, openHarness, TEST_CONFIG, type Harness } from "./harness.ts";

describe("API key format", () => {
  it("is <prefix>_<43 base62 characters>, with a displayable prefix of 8", () => {
    const { fullKey, displayPrefix } = generateApiKey("tml");
    expect(fullKey).toMatch(/^tml_[0-9A-Za-z]{43}$/);
    expect(SECRET_LENGTH).toBe(43);
    expect(displayPrefix).toBe(fullKey.slice(0, 12));
    expect(isWellFormedApiKey("tml", fullKey)).toBe(true);
    expect(isWellFormedApiKey("abc", fullKey)).toBe(false);
  });

  it("does not repeat", () => {
    const keys = new Set(Array.from({ length: 1000 }, () => generateApiKey("tml").fullKey));
    expect(keys.size).toBe(1000);
  });
});

describe("accounts: API keys", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await openHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it("creates a key whose secret authenticates, and stores only its hash", async () => {
    const company = await h.accounts.companies.create({ name: "Acme GmbH" });
    const scopes = ["mail.transactional.send", "mail.events.read"];
    const { key, secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "production", scopes }));

    expect(secret).toMatch(/^tml_[0-9A-Za-z]{43}$/);
    expect(key).toMatchObject({
      companyId: company.id,
      name: "production",
      prefix: secret.slice(0, 12),
      scopes,
      status: "active",
      lastUsedAt: null,
      expiresAt: null,
      revokedAt: null,
    });

    const auth = await h.accounts.authenticator.authenticate(secret);
    expect(auth).toEqual({
      keyId: key.id,
      keyName: "production",
      keyPrefix: key.prefix,
      scopes,
      expiresAt: null,
      companyId: company.id,
      companyName: "Acme GmbH",
      entitlements: { api: true, smtp: false },
    });

    // The whole row, as text: the secret is in it nowhere, only its HMAC.
    const row = await h.db.query<{ row: string; secret_hash: Buffer }>(`select t::text as row, secret_hash from api_key t where id = $1`, [key.id]);
    const stored = row.rows[0];
    expect(stored).toBeDefined();
    const secretPart = secret.slice(4);
    expect(stored?.row).not.toContain(secret);
    expect(stored?.row).not.toContain(secretPart);
    expect(stored?.row).not.toContain(Buffer.from(secret).toString("hex"));
    expect(stored?.secret_hash).toEqual(createHmac("sha256", TEST_CONFIG.apiKeyPepper).update(secret).digest());
  });

  it("refuses unknown scopes, naming the field", async () => {
    const company = await h.accounts.companies.create({ name: "Scopes Ltd" });
    const error = await expectApiError(
      h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read", "mail.superuser"] })),
      "VALIDATION_ERROR",
    );
    expect(error.message).toContain("scopes[1]");
    await expectApiError(h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: [] })), "VALIDATION_ERROR");
    // Every known scope is accepted; duplicates collapse.
    const { key } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "all", scopes: [...API_KEY_SCOPES, "mail.events.read"] }));
    expect(key.scopes).toEqual([...API_KEY_SCOPES]);
  });

  it("validates names and expiry", async () => {
    const company = await h.accounts.companies.create({ name: "Names Inc" });
    await expectApiError(h.accounts.keys.create(asOperator({ companyId: company.id, name: "   ", scopes: ["mail.events.read"] })), "VALIDATION_ERROR");
    await expectApiError(h.accounts.keys.create(asOperator({ companyId: company.id, name: "x".repeat(201), scopes: ["mail.events.read"] })), "VALIDATION_ERROR");
    const past = new Date(h.clock.now().getTime() - 1000);
    const error = await expectApiError(h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"], expiresAt: past })), "VALIDATION_ERROR");
    expect(error.message).toContain("expiresAt");
  });

  it("answers NOT_FOUND for an unknown company", async () => {
    await expectApiError(h.accounts.keys.create(asOperator({ companyId: "6f1c2d1e-0000-4000-8000-000000000000", name: "k", scopes: ["mail.events.read"] })), "NOT_FOUND");
    await expectApiError(h.accounts.keys.create(asOperator({ companyId: "not-a-uuid", name: "k", scopes: ["mail.events.read"] })), "NOT_FOUND");
    await expectApiError(h.accounts.keys.list({ companyId: "6f1c2d1e-0000-4000-8000-000000000000" }).then((page) => page.items), "NOT_FOUND");
  });

  it("refuses malformed and unknown keys with API_KEY_INVALID", async () => {
    const company = await h.accounts.companies.create({ name: "Malformed AG" });
    const { secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const unknown = generateApiKey("tml").fullKey;
    for (const presented of [
      "",
      "tml_",
      "tml",
      `Bearer ${secret}`,
      `${secret} `,
      secret.slice(0, -1),
      `${secret}x`,
      `abc_${secret.slice(4)}`,
      `tml-${secret.slice(4)}`,
      `tml_${secret.slice(4, -1)}!`,
      unknown,
    ]) {
      await expectApiError(h.accounts.authenticator.authenticate(presented), "API_KEY_INVALID");
    }
  });

  it("does not accept a key hashed with another pepper", async () => {
    const company = await h.accounts.companies.create({ name: "Pepper SA" });
    const { secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const { createAccounts } = await import("../../../src/wiring/accounts.ts");
    const other = createAccounts(h.orm, { ...TEST_CONFIG, apiKeyPepper: "another-pepper" }, { clock: h.clock.now });
    try {
      await expectApiError(other.authenticator.authenticate(secret), "API_KEY_INVALID");
    } finally {
      await other.close();
    }
  });

  it("revocation takes effect at once in the revoking process and as soon as PostgreSQL tells the others", async () => {
    const other = await h.openProcess();
    const company = await h.accounts.companies.create({ name: "Revoked BV" });
    const { key, secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    // Both "processes" accept the key (and may have cached its lookup)...
    await h.accounts.authenticator.authenticate(secret);
    await other.accounts.authenticator.authenticate(secret);
    await other.accounts.authenticator.authenticate(secret);

    const revoked = await h.accounts.keys.revoke(asOperator({ companyId: company.id, keyId: key.id }));
    expect(revoked.status).toBe("revoked");
    expect(revoked.revokedAt).toEqual(h.clock.now());

    // ...the revoking one refuses it on the very next call; the other once
    // the change notice arrives (moments later: this waits for it, it does not time it).
    await expectApiError(h.accounts.authenticator.authenticate(secret), "API_KEY_INVALID");
    await vi.waitFor(() => expectApiError(other.accounts.authenticator.authenticate(secret), "API_KEY_INVALID"), {
      timeout: 10_000,
      interval: 20,
    });

    // Revoking again changes nothing.
    h.clock.advanceHours(1);
    const again = await h.accounts.keys.revoke(asOperator({ companyId: company.id, keyId: key.id }));
    expect(again.revokedAt).toEqual(revoked.revokedAt);
  });

  it("rotation: old key works during the grace, then answers API_KEY_EXPIRED; the new one works", async () => {
    const company = await h.accounts.companies.create({ name: "Rotate Oy" });
    const scopes = ["mail.contacts.read", "mail.contacts.write"];
    const { key: old, secret: oldSecret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "crm", scopes }));

    const rotated = await h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: old.id }));
    const graceEnd = new Date(h.clock.now().getTime() + 24 * 3_600_000);
    expect(rotated.secret).not.toBe(oldSecret);
    expect(rotated.key).toMatchObject({ name: "crm", scopes, status: "active", expiresAt: null });
    expect(rotated.previous).toMatchObject({ id: old.id, status: "active", replacedById: rotated.key.id, expiresAt: graceEnd });

    const oldAuth = await h.accounts.authenticator.authenticate(oldSecret);
    expect(oldAuth.expiresAt).toEqual(graceEnd);
    expect((await h.accounts.authenticator.authenticate(rotated.secret)).keyId).toBe(rotated.key.id);

    h.clock.advanceHours(23.9);
    await h.accounts.authenticator.authenticate(oldSecret);

    h.clock.advanceHours(0.1); // exactly the end of the grace
    await expectApiError(h.accounts.authenticator.authenticate(oldSecret), "API_KEY_EXPIRED");
    expect((await h.accounts.authenticator.authenticate(rotated.secret)).keyId).toBe(rotated.key.id);

    const list = (await h.accounts.keys.list({ companyId: company.id })).items;
    expect(list.map((k) => [k.id, k.status])).toEqual([
      [old.id, "expired"],
      [rotated.key.id, "active"],
    ]);
  });

  it("rotation with graceHours 0 ends the old key at once", async () => {
    const company = await h.accounts.companies.create({ name: "Zero Grace" });
    const { key, secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"] }));
    const rotated = await h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: key.id, graceHours: 0 }));
    await expectApiError(h.accounts.authenticator.authenticate(secret), "API_KEY_EXPIRED");
    await h.accounts.authenticator.authenticate(rotated.secret);
  });

  it("rotation keeps an earlier own expiry, and refuses keys that are not active", async () => {
    const company = await h.accounts.companies.create({ name: "Rotate Rules" });
    const soon = new Date(h.clock.now().getTime() + 3_600_000);
    const { key } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "k", scopes: ["mail.events.read"], expiresAt: soon }));
    const rotated = await h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: key.id, graceHours: 48 }));
    expect(rotated.previous.expiresAt).toEqual(soon);

    // Already rotated: rotate its successor instead.
    await expectApiError(h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: key.id })), "VALIDATION_ERROR");
    // Revoked.
    const { key: revoked } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "r", scopes: ["mail.events.read"] }));
    await h.accounts.keys.revoke(asOperator({ companyId: company.id, keyId: revoked.id }));
    await expectApiError(h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: revoked.id })), "VALIDATION_ERROR");
    // Bad grace.
    await expectApiError(h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: rotated.key.id, graceHours: -1 })), "VALIDATION_ERROR");
    // Concurrent rotations of one key: exactly one wins.
    const outcomes = await Promise.allSettled([
      h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: rotated.key.id })),
      h.accounts.keys.rotate(asOperator({ companyId: company.id, keyId: rotated.key.id })),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
    const loser = outcomes.find((o) => o.status === "rejected");
    expect(loser?.status === "rejected" && (loser.reason as { code?: string }).code).toBe("VALIDATION_ERROR");
  });

  it("own expiry answers API_KEY_EXPIRED", async () => {
    const company = await h.accounts.companies.create({ name: "Expiry Ltd" });
    const expiresAt = new Date(h.clock.now().getTime() + 2 * 3_600_000);
    const { secret } = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "temp", scopes: ["mail.events.read"], expiresAt }));
    expect((await h.accounts.authenticator.authenticate(secret)).expiresAt).toEqual(expiresAt);
    h.clock.advanceHours(2);
    await expectApiError(h.accounts.authenticator.authenticate(secret), "API_KEY_EXPIRED");
  });

  it("lists the key table of a company", async () => {
    const company = await h.accounts.companies.create({ name: "List Co" });
    const a = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "a", scopes: ["mail.events.read"] }));
    const b = await h.accounts.keys.create(asOperator({ companyId: company.id, name: "b", scopes: ["mail.transactional.send"] }));
    await h.accounts.keys.revoke(asOperator({ companyId: company.id, keyId: b.key.id }));
    const list = (await h.accounts.keys.list({ companyId: company.id })).items;
    expect(list).toHaveLength(2);
    expect(list.map((k) => ({ name: k.name, prefix: k.prefix, status: k.status }))).toEqual([
      { name: "a", prefix: a.key.prefix, status: "active" },
      { name: "b", prefix: b.key.prefix, status: "revoked" },
    ]);
    for (const k of list) expect(JSON.stringify(k)).not.toContain(a.secret.slice(12));
  });

  it("pages the key table oldest first (25 by default), with cursors bound to the company", async () => {
    const company = await h.accounts.companies.create({ name: "Many Keys Co" });
    const made: string[] = [];
    for (let i = 0; i < 27; i++) made.push((await h.accounts.keys.create(asOperator({ companyId: company.id, name: `k${i}`, scopes: ["mail.events.read"] }))).key.id);
    const first = await h.accounts.keys.list({ companyId: company.id });
    expect(first.items.map((k) => k.id)).toEqual(made.slice(0, 25));
    const rest = await h.accounts.keys.list({ companyId: company.id, cursor: first.nextCursor ?? "" });
    expect(rest.items.map((k) => k.id)).toEqual(made.slice(25));
    expect(rest.nextCursor).toBeNull();
    const other = await h.accounts.companies.create({ name: "Other Keys Co" });
    await expectApiError(h.accounts.keys.list({ companyId: other.id, cursor: first.nextCursor ?? "" }), "VALIDATION_ERROR");
    const error = await expectApiError(h.accounts.keys.list({ companyId: company.id, limit: 0 }), "VALIDATION_ERROR");
    expect(error.message).toBe("limit: must be an integer from 1 to 100");
  });
});

describe("accounts: companies", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await openHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it("creates, lists and changes entitlements", async () => {
    const a = await h.accounts.companies.create({ name: "  Alpha  " });
    const b = await h.accounts.companies.create({ name: "Beta", entitlements: { smtp: true, api: false } });
    expect(a).toMatchObject({ name: "Alpha", entitlements: { api: true, smtp: false } });
    expect(b.entitlements).toEqual({ api: false, smtp: true });
    expect((await h.accounts.companies.list()).map((c) => c.id)).toEqual([a.id, b.id]);

    const changed = await h.accounts.companies.setEntitlements({ companyId: a.id, entitlements: { smtp: true } });
    expect(changed.entitlements).toEqual({ api: true, smtp: true });
    expect((await h.accounts.companies.get({ companyId: a.id })).entitlements).toEqual({ api: true, smtp: true });

    // The authenticator reports the current entitlements on the next call.
    const { secret } = await h.accounts.keys.create(asOperator({ companyId: a.id, name: "k", scopes: ["mail.events.read"] }));
    await h.accounts.companies.setEntitlements({ companyId: a.id, entitlements: { api: false } });
    expect((await h.accounts.authenticator.authenticate(secret)).entitlements).toEqual({ api: false, smtp: true });
  });

  it("validates names and entitlements; unknown companies are NOT_FOUND", async () => {
    await expectApiError(h.accounts.companies.create({ name: "" }), "VALIDATION_ERROR");
    await expectApiError(h.accounts.companies.create({ name: "x".repeat(201) }), "VALIDATION_ERROR");
    // 200 characters, counted as the database does (code points, not UTF-16 units).
    expect([...(await h.accounts.companies.create({ name: "😀".repeat(200) })).name]).toHaveLength(200);
    await expectApiError(h.accounts.companies.create({ name: "😀".repeat(201) }), "VALIDATION_ERROR");
    const bad = { api: "yes" } as unknown as { api: boolean };
    await expectApiError(h.accounts.companies.create({ name: "Ok", entitlements: bad }), "VALIDATION_ERROR");
    await expectApiError(h.accounts.companies.setEntitlements({ companyId: "6f1c2d1e-0000-4000-8000-000000000000", entitlements: { api: true } }), "NOT_FOUND");
    await expectApiError(h.accounts.companies.get({ companyId: "nope" }), "NOT_FOUND");
  });
});
