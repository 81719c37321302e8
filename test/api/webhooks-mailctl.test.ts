import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReadySender, type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { type RoutedReceiver, startRoutedReceiver, verifiedBody, waitUntil, loopbackDelivery } from "../webhooks/api-support.ts";
import { mailctlAgainst } from "../support/mailctl.ts";

/**
 * Operators run the webhook operations through `mailctl webhook ...` (the
 * AdminService, company as a field): the real command line against the
 * running service, its JSON on stdout, its errors on stderr.
 */

interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  previousSecretExpiresAt: string | null;
}

interface Delivery {
  id: string;
  endpointId: string;
  event: string;
  state: string;
  attemptCount: number;
  lastStatus: number | null;
}

let h: SendingHarness;
let hooks: RoutedReceiver;
let sender: ReadySender;

beforeAll(async () => {
  hooks = await startRoutedReceiver();
  h = await startSendingHarness({}, undefined, { webhookDelivery: loopbackDelivery(hooks.certificate) });
  sender = await h.readySender({ credits: 10 });
});
afterAll(async () => {
  await h?.close();
  await hooks?.close();
});

const { mailctl, ok, errorCode } = mailctlAgainst(() => h.app.operatorUrl);

async function send(to: string): Promise<string> {
  const response = await h.send(sender.secret, { to, subject: "Hello", html: "<p>x</p>" });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

describe("mailctl webhook", () => {
  let endpoint: Endpoint;
  let secret: string;
  let deadId: string;

  it("creates, lists, shows and updates an endpoint of a company", async () => {
    const company = ["--company", sender.companyId];
    const created = await ok<{ endpoint: Endpoint; secret: string }>([
      "webhook", "create", ...company, "--url", hooks.urlFor("/cli/in"), "--event", "sent", "--event", "delivered", "--description", "From the CLI",
    ]);
    ({ endpoint, secret } = created);
    expect(secret).toMatch(/^whsec_/);
    expect(endpoint).toMatchObject({ url: hooks.urlFor("/cli/in"), events: ["sent", "delivered"], description: "From the CLI", enabled: true });

    const list = await ok<{ items: Endpoint[] }>(["webhook", "list", ...company]);
    expect(list.items.map((e) => e.id)).toEqual([endpoint.id]);
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(await ok<Endpoint>(["webhook", "get", ...company, "--endpoint", endpoint.id])).toMatchObject({ endpoint: { id: endpoint.id } });

    const updated = await ok<{ endpoint: Endpoint }>(["webhook", "update", ...company, "--endpoint", endpoint.id, "--event", "delivered", "--description", ""]);
    expect(updated.endpoint).toMatchObject({ events: ["delivered"], description: null, enabled: true });
  });

  it("shows a dead letter with its attempts, retries it, and retries dead letters in bulk", async () => {
    const company = ["--company", sender.companyId];
    hooks.answer("/cli/", { status: 500 });
    const first = await send("delivered@cli-one.example");
    const second = await send("delivered@cli-two.example");

    const dead = await waitUntil(async () => {
      const page = await ok<{ items: Delivery[] }>(["webhook", "deliveries", ...company, "--endpoint", endpoint.id, "--state", "dead_letter"]);
      return page.items.length === 2 ? page.items : undefined;
    }, "two dead letters", 60_000);
    expect(dead.every((d) => d.event === "delivered" && d.attemptCount === 5 && d.lastStatus === 500)).toBe(true);
    deadId = dead[0]?.id ?? "";
    const detail = await ok<{ delivery: Delivery; attempts: Array<{ number: number; status: number }> }>(["webhook", "delivery", ...company, "--delivery", deadId]);
    expect(detail.attempts.map((a) => [a.number, a.status])).toEqual([[1, 500], [2, 500], [3, 500], [4, 500], [5, 500]]);
    const messages = hooks.on("/cli/in").map((r) => verifiedBody(r, secret).data.messageId);
    expect(new Set(messages)).toEqual(new Set([first, second]));

    hooks.answer("/cli/", { status: 200 });
    const retried = await ok<{ delivery: Delivery }>(["webhook", "retry", ...company, "--delivery", deadId]);
    expect(retried.delivery.state).toBe("attempting");
    const bulk = await ok<{ retried: number }>(["webhook", "retry-dead-letters", ...company, "--endpoint", endpoint.id, "--since", new Date(Date.now() - 3_600_000).toISOString()]);
    expect(bulk.retried).toBe(1);
    await waitUntil(async () => {
      const page = await ok<{ items: Delivery[] }>(["webhook", "deliveries", ...company, "--endpoint", endpoint.id, "--state", "succeeded"]);
      return page.items.length === 2 ? true : undefined;
    }, "both retried deliveries to succeed", 60_000);
    const done = await ok<{ delivery: Delivery; attempts: Array<{ status: number }> }>(["webhook", "delivery", ...company, "--delivery", deadId]);
    expect(done.attempts.map((a) => a.status)).toEqual([500, 500, 500, 500, 500, 200]);

    const paged = await ok<{ items: Delivery[]; nextCursor: string | null }>(["webhook", "deliveries", ...company, "--limit", "1", "--event", "delivered"]);
    expect(paged.items).toHaveLength(1);
    const next = await ok<{ items: Delivery[] }>(["webhook", "deliveries", ...company, "--limit", "1", "--event", "delivered", "--cursor", paged.nextCursor ?? ""]);
    expect(next.items[0]?.id).not.toBe(paged.items[0]?.id);
  });

  it("rotates the secret (shown once) and deletes the endpoint", async () => {
    const company = ["--company", sender.companyId];
    const rotated = await ok<{ endpoint: Endpoint; secret: string }>(["webhook", "rotate", ...company, "--endpoint", endpoint.id]);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(secret);
    expect(rotated.endpoint.previousSecretExpiresAt).not.toBeNull();
    expect(await ok<{ id: string }>(["webhook", "delete", ...company, "--endpoint", endpoint.id])).toEqual({ id: endpoint.id });
    expect(await errorCode(["webhook", "get", ...company, "--endpoint", endpoint.id])).toBe("NOT_FOUND");
    expect(await errorCode(["webhook", "delivery", ...company, "--delivery", deadId])).toBe("NOT_FOUND");
  });

  it("reports the contract's errors and usage mistakes", async () => {
    const company = ["--company", sender.companyId];
    expect(await errorCode(["webhook", "create", ...company, "--url", "https://10.0.0.1/hook", "--event", "sent"])).toBe("WEBHOOK_HOST_NOT_ALLOWED");
    expect(await errorCode(["webhook", "create", ...company, "--url", hooks.urlFor("/x"), "--event", "nope"])).toBe("VALIDATION_ERROR");
    expect(await errorCode(["webhook", "list", "--company", "00000000-0000-4000-8000-000000000000"])).toBe("NOT_FOUND");
    const other = await h.newCompanyWithKey(["mail.admin"], "Other Co");
    expect(await errorCode(["webhook", "retry", "--company", other.companyId, "--delivery", deadId])).toBe("NOT_FOUND");

    const usage = await mailctl(["webhook", "create", ...company, "--url", hooks.urlFor("/x")]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--event is required");
    const state = await mailctl(["webhook", "deliveries", ...company, "--state", "lost"]);
    expect(state.code).toBe(2);
    const since = await mailctl(["webhook", "retry-dead-letters", ...company, "--endpoint", endpoint.id]);
    expect(since.code).toBe(2);
  });
});
