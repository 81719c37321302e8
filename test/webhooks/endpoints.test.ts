import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiError, ValidationError } from "../../src/contract/api-error.ts";
import { type CreateEndpointCommand, HostRefusedError } from "../../src/capabilities/webhooks/index.ts";
import { signingSecrets } from "../../src/capabilities/webhooks/endpoints.ts";
import { errorCode, openWebhooksHarness, PUBLIC_ADDRESS, type WebhooksHarness } from "./harness.ts";

/** Webhook endpoints through the capability, stored in PostgreSQL. */
let h: WebhooksHarness;
let companyA: string;
let companyB: string;

beforeAll(async () => {
  h = await openWebhooksHarness();
  companyA = await h.newCompany("A");
  companyB = await h.newCompany("B");
  h.dns.set("private.example.com", ["10.0.0.8"]);
  h.dns.set("rebinds.example.com", [PUBLIC_ADDRESS, "127.0.0.1"]);
});

afterAll(async () => {
  await h?.close();
});

const endpoints = () => h.webhooks.endpoints;

describe("creating an endpoint", () => {
  it("answers the endpoint and its secret once; the secret is stored sealed, never in plain text", async () => {
    const { endpoint, secret } = await endpoints().create({
      companyId: companyA,
      url: "https://HOOKS.example.com/mail?x=1",
      description: "  Orders service ",
      events: ["delivered", "bounced", "delivered"],
    });
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(endpoint).toMatchObject({
      url: "https://hooks.example.com/mail?x=1",
      description: "Orders service",
      events: ["delivered", "bounced"],
      enabled: true,
      previousSecretExpiresAt: null,
    });
    expect(JSON.stringify(await endpoints().get({ companyId: companyA, endpointId: endpoint.id }))).not.toContain(secret);
    const { rows } = await h.db.query(`select * from webhook_endpoint where id = $1`, [endpoint.id]);
    expect(JSON.stringify(rows)).not.toContain(secret.slice("whsec_".length));
    expect(rows[0]?.secret_sealed).toMatch(/^v1\./);
  });

  it("refuses unknown or missing events, bad URLs and long descriptions with VALIDATION_ERROR naming the field", async () => {
    const bad = async (input: Omit<CreateEndpointCommand, "companyId">) => {
      try {
        await endpoints().create({ companyId: companyA, ...input });
        return [];
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).fields.map((f) => f.field);
      }
    };
    expect(await bad({ url: "https://hooks.example.com/", events: ["delivered", "teleported"] })).toEqual(["events"]);
    expect(await bad({ url: "https://hooks.example.com/", events: [] })).toEqual(["events"]);
    expect(await bad({ url: "http://hooks.example.com/", events: ["sent"] })).toEqual(["url"]);
    expect(await bad({ url: "https://user:pw@hooks.example.com/", events: ["sent"] })).toEqual(["url"]);
    expect(await bad({ url: "", events: ["sent"] })).toEqual(["url"]);
    expect(await bad({ url: `https://hooks.example.com/${"a".repeat(2100)}`, events: ["sent"] })).toEqual(["url"]);
    expect(await bad({ url: "https://hooks.example.com/", events: ["sent"], description: "x".repeat(501) })).toEqual(["description"]);
  });

  it("refuses private, loopback, internal and rebinding hosts with WEBHOOK_HOST_NOT_ALLOWED", async () => {
    for (const url of [
      "https://10.1.2.3/",
      "https://127.0.0.1/",
      "https://[::1]/",
      "https://169.254.169.254/",
      "https://localhost/",
      "https://private.example.com/",
      "https://rebinds.example.com/",
      "https://nowhere.example.com/",
      "https://2130706433/",
    ]) {
      expect(await errorCode(endpoints().create({ companyId: companyA, url, events: ["sent"] })), url).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    }
    const error = await endpoints()
      .create({ companyId: companyA, url: "https://private.example.com/", events: ["sent"] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).httpStatus).toBe(400);
    // The answer says the host is not allowed and nothing more; the resolved address is for the log only.
    expect((error as ApiError).message).toBe("The endpoint host is not allowed. Use a public https:// address.");
    expect((error as ApiError).message).not.toContain("10.0.0.8");
    expect((error as HostRefusedError).detail).toContain("10.0.0.8");
  });

  it("can be created disabled", async () => {
    const { endpoint } = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/off", events: ["sent"], enabled: false });
    expect(endpoint.enabled).toBe(false);
  });
});

describe("one company's endpoints are invisible to another", () => {
  it("answers NOT_FOUND to every call on a foreign endpoint and lists none", async () => {
    const { endpoint } = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/a", events: ["sent"] });
    expect(await errorCode(endpoints().get({ companyId: companyB, endpointId: endpoint.id }))).toBe("NOT_FOUND");
    expect(await errorCode(endpoints().update({ companyId: companyB, endpointId: endpoint.id, enabled: false }))).toBe("NOT_FOUND");
    expect(await errorCode(endpoints().rotateSecret({ companyId: companyB, endpointId: endpoint.id }))).toBe("NOT_FOUND");
    expect(await errorCode(endpoints().delete({ companyId: companyB, endpointId: endpoint.id }))).toBe("NOT_FOUND");
    expect(await endpoints().list({ companyId: companyB })).toEqual([]);
    expect((await endpoints().get({ companyId: companyA, endpointId: endpoint.id })).enabled).toBe(true);
    expect(await errorCode(endpoints().get({ companyId: companyA, endpointId: "not-a-uuid" }))).toBe("NOT_FOUND");
  });
});

describe("changing an endpoint", () => {
  it("changes only what is given; an empty event list keeps the events; an empty description removes it", async () => {
    const { endpoint } = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/u", description: "d", events: ["sent"] });
    const disabled = await endpoints().update({ companyId: companyA, endpointId: endpoint.id, enabled: false, events: [] });
    expect(disabled).toMatchObject({ enabled: false, events: ["sent"], description: "d", url: "https://hooks.example.com/u" });
    expect(disabled.updatedAt.getTime()).toBeGreaterThanOrEqual(endpoint.updatedAt.getTime());
    const changed = await endpoints().update({
      companyId: companyA, endpointId: endpoint.id,
      url: "https://hooks.example.com/v2",
      events: ["failed", "order.paid"],
      description: "",
    });
    expect(changed).toMatchObject({ url: "https://hooks.example.com/v2", events: ["failed", "order.paid"], description: null, enabled: false });
  });

  it("checks a new URL like on create and leaves the endpoint unchanged when refused", async () => {
    const { endpoint } = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/keep", events: ["sent"] });
    expect(await errorCode(endpoints().update({ companyId: companyA, endpointId: endpoint.id, url: "https://private.example.com/" }))).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    expect(await errorCode(endpoints().update({ companyId: companyA, endpointId: endpoint.id, events: ["nope"] }))).toBe("VALIDATION_ERROR");
    expect((await endpoints().get({ companyId: companyA, endpointId: endpoint.id })).url).toBe("https://hooks.example.com/keep");
  });
});

describe("rotating the secret", () => {
  it("issues a new secret; both sign for 24 hours, then only the new one", async () => {
    const created = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/r", events: ["sent"] });
    const rotatedAt = new Date();
    h.now.value = rotatedAt;
    try {
      const rotated = await endpoints().rotateSecret({ companyId: companyA, endpointId: created.endpoint.id });
      expect(rotated.secret).not.toBe(created.secret);
      expect(rotated.endpoint.previousSecretExpiresAt?.getTime()).toBe(rotatedAt.getTime() + 24 * 3_600_000);

      const record = await h.endpointStore.find(companyA, created.endpoint.id);
      if (!record) throw new Error("endpoint vanished");
      expect(signingSecrets(h.sealer, record, rotatedAt)).toEqual([rotated.secret, created.secret]);
      const almost = new Date(rotatedAt.getTime() + 24 * 3_600_000 - 1);
      expect(signingSecrets(h.sealer, record, almost)).toEqual([rotated.secret, created.secret]);
      const after = new Date(rotatedAt.getTime() + 24 * 3_600_000);
      expect(signingSecrets(h.sealer, record, after)).toEqual([rotated.secret]);
      h.now.value = after;
      expect((await endpoints().get({ companyId: companyA, endpointId: created.endpoint.id })).previousSecretExpiresAt).toBeNull();
    } finally {
      h.now.value = undefined;
    }
  });

  it("retires the oldest secret at once when rotated again within the overlap: at most two sign", async () => {
    const created = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/rr", events: ["sent"] });
    const first = await endpoints().rotateSecret({ companyId: companyA, endpointId: created.endpoint.id });
    const second = await endpoints().rotateSecret({ companyId: companyA, endpointId: created.endpoint.id });
    const record = await h.endpointStore.find(companyA, created.endpoint.id);
    if (!record) throw new Error("endpoint vanished");
    expect(signingSecrets(h.sealer, record, new Date())).toEqual([second.secret, first.secret]);
  });

  it("keeps a sealed secret bound to its endpoint: copied onto another endpoint, it does not open", async () => {
    const a = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/s1", events: ["sent"] });
    const b = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/s2", events: ["sent"] });
    await h.db.query(`update webhook_endpoint set secret_sealed = (select secret_sealed from webhook_endpoint where id = $1) where id = $2`, [
      a.endpoint.id,
      b.endpoint.id,
    ]);
    const record = await h.endpointStore.find(companyA, b.endpoint.id);
    if (!record) throw new Error("endpoint vanished");
    expect(() => signingSecrets(h.sealer, record, new Date())).toThrow();
  });
});

describe("deleting an endpoint", () => {
  it("removes it with its deliveries", async () => {
    const { endpoint } = await endpoints().create({ companyId: companyA, url: "https://hooks.example.com/del", events: ["delivered"] });
    await h.recordEvent(companyA, "delivered");
    await h.outbox.fanOut(100);
    const before = await h.db.query(`select count(*)::int as n from webhook_delivery where endpoint_id = $1`, [endpoint.id]);
    expect(before.rows[0]?.n).toBe(1);
    await endpoints().delete({ companyId: companyA, endpointId: endpoint.id });
    expect(await errorCode(endpoints().get({ companyId: companyA, endpointId: endpoint.id }))).toBe("NOT_FOUND");
    expect(await errorCode(endpoints().delete({ companyId: companyA, endpointId: endpoint.id }))).toBe("NOT_FOUND");
    const after = await h.db.query(`select count(*)::int as n from webhook_delivery where endpoint_id = $1`, [endpoint.id]);
    expect(after.rows[0]?.n).toBe(0);
  });
});
