import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type SilentNameserver, startSilentNameserver } from "../adapters/http/silent-nameserver.ts";
import { HOOK_HOST, type RoutedReceiver, SHORT_SCHEDULE, startRoutedReceiver, waitUntil } from "../webhooks/api-support.ts";

/**
 * The silent nameserver (issue 18, item 5): a webhook host whose DNS never
 * answers. The service resolves webhook hosts with an asynchronous resolver
 * that has its own deadline (WEBHOOK_DNS_TIMEOUT_MS, here 2.5 s), never with
 * getaddrinfo on libuv's thread pool, and the 10 s receiver budget of an
 * attempt covers the lookup. So:
 *
 * - a save whose host does not resolve in time is refused
 *   (WEBHOOK_HOST_NOT_ALLOWED, saying nothing more);
 * - while many such saves wait on DNS, other tenants' calls are answered
 *   (the saves hold no thread the rest of the process needs);
 * - a delivery attempt to an endpoint whose nameserver went silent records
 *   `timeout`, and nothing reaches the receiver.
 *
 * The real resolver of the service is used (no resolver override): only its
 * nameserver is the local test one.
 */
let h: SendingHarness;
let dns: SilentNameserver;
let hooks: RoutedReceiver;
let sender: ReadySender;
let adminKey: string;
let neighbourKey: string;

beforeAll(async () => {
  dns = await startSilentNameserver();
  dns.answer(HOOK_HOST, "127.0.0.1");
  hooks = await startRoutedReceiver();
  h = await startSendingHarness({ webhookDnsTimeoutMs: 2_500 }, undefined, {
    webhookDelivery: {
      nameservers: [dns.address],
      allowLoopback: true,
      trustedCa: hooks.certificate.cert,
      schedule: SHORT_SCHEDULE,
      receiverTimeoutMs: 3_000,
    },
  });
  sender = await h.readySender({ credits: 10 });
  adminKey = (await h.newKey(sender.companyId, ["mail.admin"], "webhooks admin")).secret;
  neighbourKey = (await h.newCompanyWithKey(["mail.admin"], "Neighbour")).secret;
});

afterAll(async () => {
  await h?.close();
  await hooks?.close();
  await dns?.close();
});

async function call(key: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await h.fetch(path, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {}, text };
}

describe("a webhook host whose nameserver never answers", () => {
  let endpointId: string;

  it("saves while the nameserver answers (the real resolver, on the test nameserver)", async () => {
    const created = await call(adminKey, "POST", "/mail/v1/webhooks", { url: hooks.urlFor("/dns/slow"), events: ["sent"] });
    expect(created.status, created.text).toBe(201);
    endpointId = (created.json.endpoint as { id: string }).id;
    expect(dns.queries()).toBeGreaterThan(0);
  });

  it("refuses a save once the nameserver is silent, with the plain host refusal, and other tenants are answered meanwhile", async () => {
    dns.silence();
    const before = dns.queries();
    let savesDone = 0;
    const saves = Array.from({ length: 8 }, (_, n) =>
      call(adminKey, "POST", "/mail/v1/webhooks", { url: `https://silent-${n}.hooks.example/hook`, events: ["sent"] }).then((answer) => {
        savesDone++;
        return answer;
      }),
    );
    // While the eight saves wait on DNS, a neighbour's calls are answered.
    const listed = await call(neighbourKey, "GET", "/mail/v1/webhooks");
    const created = await call(neighbourKey, "POST", "/mail/v1/webhooks", { url: "https://93.184.215.14/neighbour", events: ["sent"] });
    expect(listed.status).toBe(200);
    expect(created.status, created.text).toBe(201);
    expect(savesDone, "the neighbour was answered before the saves waiting on DNS").toBe(0);

    for (const answer of await Promise.all(saves)) {
      expect(answer.status, answer.text).toBe(400);
      expect(answer.json).toEqual({ error: { code: "WEBHOOK_HOST_NOT_ALLOWED", message: "The endpoint host is not allowed. Use a public https:// address." } });
    }
    expect(dns.queries()).toBeGreaterThan(before);
    const list = await call(adminKey, "GET", "/mail/v1/webhooks");
    expect((list.json.items as unknown[]).length).toBe(1);
  });

  it("a delivery attempt to the endpoint records timeout (the lookup is inside the budget), and nothing reaches the receiver", async () => {
    const sent = await h.send(sender.secret, { to: "someone@customer.example", subject: "Receipt", html: "<p>Thanks</p>" });
    expect(sent.status).toBe(202);
    const messageId = ((await sent.json()) as { id: string }).id;
    const attempt = await waitUntil(async () => {
      const list = await call(adminKey, "GET", `/mail/v1/webhooks/deliveries?endpointId=${endpointId}&messageId=${messageId}`);
      const delivery = (list.json.items as { id: string; attemptCount: number }[] | undefined)?.find((d) => d.attemptCount >= 1);
      if (!delivery) return undefined;
      const detail = await call(adminKey, "GET", `/mail/v1/webhooks/deliveries/${delivery.id}`);
      return detail.json as { delivery: { lastError?: string; lastStatus?: number }; attempts: { error?: string; status?: number }[] };
    }, "the first attempt");
    expect(attempt.attempts[0]).toMatchObject({ error: "timeout" });
    expect(attempt.attempts[0]?.status ?? null).toBeNull();
    expect(attempt.delivery).toMatchObject({ lastError: "timeout" });
    expect(hooks.on("/dns/slow")).toHaveLength(0);
  });
});
