import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config.ts";
import { WebhooksService } from "../../src/gen/mail/v1/webhooks_pb.js";
import { outcomeOf } from "./support/answers.ts";
import { type HostileApi, PUBLIC_HOOK_HOST, startHostileApi, type Tenant } from "./support/hostile-api.ts";

/**
 * The endpoint flood (issue 18, item 4): one admin key registering endpoint
 * after endpoint, to one victim URL or in bulk, to multiply every event.
 * A company may have at most 20 endpoints and at most 3 with the same URL
 * host (WEBHOOK_ENDPOINTS_PER_COMPANY, WEBHOOK_ENDPOINTS_PER_HOST); beyond
 * them create and update answer 400 VALIDATION_ERROR naming the limit, even
 * when the requests race, and other companies are not affected.
 */
let api: HostileApi;

beforeAll(async () => {
  api = await startHostileApi();
});
afterAll(async () => api?.close());

/** A public address literal per n: each its own host. */
const hostUrl = (n: number, path = "/hook") => `https://93.184.${200 + Math.floor(n / 250)}.${(n % 250) + 1}${path}`;

interface Answer {
  status: number;
  json: unknown;
  text: string;
}

function errorOf(answer: Answer): { code: string; message: string } | undefined {
  return (answer.json as { error?: { code: string; message: string } }).error;
}

async function endpointCount(tenant: Tenant): Promise<number> {
  const list = await api.rest(tenant, "GET", "/mail/v1/webhooks");
  expect(list.status, list.text).toBe(200);
  return (list.json as { items: unknown[] }).items.length;
}

describe("the endpoint flood", () => {
  it("60 creates at once on distinct hosts: exactly 20 are saved, the rest are 400 naming the limit of 20", async () => {
    const tenant = await api.newTenant("Flood");
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, n) => api.rest(tenant, "POST", "/mail/v1/webhooks", { url: hostUrl(n), events: ["sent", "delivered"] })),
    );
    const saved = answers.filter((a) => a.status === 201);
    const refused = answers.filter((a) => a.status !== 201);
    expect(saved).toHaveLength(20);
    expect(refused).toHaveLength(40);
    for (const answer of refused) {
      expect(answer.status, answer.text).toBe(400);
      expect(errorOf(answer)?.code).toBe("VALIDATION_ERROR");
      expect(errorOf(answer)?.message).toMatch(/^url: .*at most 20 webhook endpoints/);
    }
    expect(await endpointCount(tenant)).toBe(20);

    // Over gRPC too, and a deleted endpoint frees its place.
    const hooks = api.grpc(WebhooksService, tenant);
    const outcome = await outcomeOf(() => hooks.createWebhookEndpoint({ url: hostUrl(100), events: ["sent"] }));
    expect(outcome).toBeInstanceOf(ConnectError);
    expect((outcome as ConnectError).code).toBe(Code.InvalidArgument);
    expect((outcome as ConnectError).rawMessage).toContain("at most 20 webhook endpoints");
    const first = (saved[0]?.json as { endpoint: { id: string } }).endpoint.id;
    expect((await api.rest(tenant, "DELETE", `/mail/v1/webhooks/${first}`)).status).toBe(200);
    expect((await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: hostUrl(101), events: ["sent"] })).status).toBe(201);
    expect(await endpointCount(tenant)).toBe(20);
  });

  it("one victim host: at most 3 endpoints, whatever the path, port or racing; the 400 names the host limit", async () => {
    const tenant = await api.newTenant("Victim");
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        api.rest(tenant, "POST", "/mail/v1/webhooks", { url: `https://${PUBLIC_HOOK_HOST}${n % 2 ? ":8443" : ""}/victim/${n}`, events: ["sent"] }),
      ),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    for (const answer of answers.filter((a) => a.status !== 201)) {
      expect(answer.status, answer.text).toBe(400);
      expect(errorOf(answer)?.message).toBe(`url: a company may have at most 3 webhook endpoints with the same host (${PUBLIC_HOOK_HOST})`);
    }
    // An address literal of another host is still welcome.
    expect((await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: hostUrl(7), events: ["sent"] })).status).toBe(201);
  });

  it("an update cannot move a fourth endpoint onto a full host, but may keep its own host", async () => {
    const tenant = await api.newTenant("Mover");
    for (let n = 0; n < 3; n++) {
      expect((await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: `https://${PUBLIC_HOOK_HOST}/full/${n}`, events: ["sent"] })).status).toBe(201);
    }
    const other = await api.rest(tenant, "POST", "/mail/v1/webhooks", { url: hostUrl(3), events: ["sent"] });
    const otherId = (other.json as { endpoint: { id: string } }).endpoint.id;
    const moved = await api.rest(tenant, "PATCH", `/mail/v1/webhooks/${otherId}`, { url: `https://${PUBLIC_HOOK_HOST}/moved` });
    expect(moved.status, moved.text).toBe(400);
    expect(errorOf(moved)?.message).toContain("at most 3 webhook endpoints with the same host");
    // Changing the path on its own host is not a new endpoint.
    const list = (await api.rest(tenant, "GET", "/mail/v1/webhooks")).json as { items: { id: string; url: string }[] };
    const onFull = list.items.find((e) => e.url.includes(PUBLIC_HOOK_HOST));
    const samehost = await api.rest(tenant, "PATCH", `/mail/v1/webhooks/${onFull?.id}`, { url: `https://${PUBLIC_HOOK_HOST}/full/renamed` });
    expect(samehost.status, samehost.text).toBe(200);
  });

  it("the limits are per company: a flooded company does not use up another's places", async () => {
    const flooded = await api.newTenant("Flooded");
    await Promise.all(Array.from({ length: 20 }, (_, n) => api.rest(flooded, "POST", "/mail/v1/webhooks", { url: hostUrl(n), events: ["sent"] })));
    expect(await endpointCount(flooded)).toBe(20);
    const neighbour = await api.newTenant("Neighbour");
    for (let n = 0; n < 3; n++) {
      expect((await api.rest(neighbour, "POST", "/mail/v1/webhooks", { url: hostUrl(n), events: ["sent"] })).status).toBe(201);
    }
  });
});

describe("the limits are configuration", () => {
  it("WEBHOOK_ENDPOINTS_PER_COMPANY and WEBHOOK_ENDPOINTS_PER_HOST default to 20 and 3 and can be set", () => {
    expect(loadConfig({})).toMatchObject({ webhookEndpointsPerCompany: 20, webhookEndpointsPerHost: 3 });
    expect(loadConfig({ WEBHOOK_ENDPOINTS_PER_COMPANY: "50", WEBHOOK_ENDPOINTS_PER_HOST: "1" })).toMatchObject({
      webhookEndpointsPerCompany: 50,
      webhookEndpointsPerHost: 1,
    });
    expect(() => loadConfig({ WEBHOOK_ENDPOINTS_PER_HOST: "0" })).toThrow(/WEBHOOK_ENDPOINTS_PER_HOST/);
  });
});
