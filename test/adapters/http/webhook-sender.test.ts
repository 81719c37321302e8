import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { HttpsWebhookSender } from "../../../src/adapters/http/webhook-sender.ts";
import type { OutgoingWebhook } from "../../../src/capabilities/webhooks/delivery-attempt.ts";
import { type HostResolver, type ResolvedAddress, WebhookTargetPolicy } from "../../../src/capabilities/webhooks/ssrf-policy.ts";
import { type HttpsReceiver, makeTestCertificate, startHttpsReceiver, type TestCertificate } from "./https-receiver.ts";

/**
 * The HTTPS delivery adapter against real HTTPS receivers on 127.0.0.1.
 * Loopback is reachable only because these tests build the policy with
 * `allowLoopback`; one test shows the same request refused without it.
 */
const HOOK_NAME = "hooks.customer.example";

/** Answers from a list that the test changes (one answer per call, last one repeated). */
function scriptedResolver(): HostResolver & { answers: string[][]; calls: number } {
  const state = {
    answers: [["127.0.0.1"]] as string[][],
    calls: 0,
    async resolve(): Promise<readonly ResolvedAddress[]> {
      const answer = state.answers[Math.min(state.calls, state.answers.length - 1)] ?? [];
      state.calls++;
      return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
  return state;
}

let certificate: TestCertificate;
let receiver: HttpsReceiver;
const resolver = scriptedResolver();
let sender: HttpsWebhookSender;

function webhook(url: string, body = '{"id":"d-1","event":"delivered","occurredAt":"2025-11-22T10:00:00.000Z","data":{}}'): OutgoingWebhook {
  return {
    url,
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "Service-Mail-Webhooks/1.0",
      "service-signature": "t=1763805600,v1=abc",
      "service-delivery": "d-1",
      "service-attempt": "1",
    },
  };
}

beforeAll(async () => {
  certificate = await makeTestCertificate([HOOK_NAME]);
  receiver = await startHttpsReceiver(certificate);
  sender = new HttpsWebhookSender({
    policy: new WebhookTargetPolicy({ resolver, allowLoopback: true }),
    timeoutMs: 1_000,
    trustedCa: certificate.cert,
  });
});

afterAll(async () => {
  await receiver?.close();
});

beforeEach(() => {
  receiver.received.length = 0;
  receiver.handle((_request, response) => response.writeHead(200).end());
  resolver.answers = [["127.0.0.1"]];
  resolver.calls = 0;
});

describe("HTTPS webhook sender", () => {
  it("posts the body and headers as given and succeeds on a 2xx", async () => {
    receiver.handle((_request, response) => response.writeHead(204).end());
    const sent = webhook(`${receiver.url}/hooks/mail?src=1`);
    const outcome = await sender.post(sent);
    expect(outcome.ok).toBe(true);
    expect(outcome.status).toBe(204);
    expect(outcome.errorClass).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);

    const [request] = receiver.received;
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe("/hooks/mail?src=1");
    expect(request?.body).toBe(sent.body);
    expect(request?.headers["content-type"]).toBe("application/json");
    expect(request?.headers["user-agent"]).toBe("Service-Mail-Webhooks/1.0");
    expect(request?.headers["service-signature"]).toBe("t=1763805600,v1=abc");
    expect(request?.headers["service-delivery"]).toBe("d-1");
    expect(request?.headers["service-attempt"]).toBe("1");
    expect(request?.headers["content-length"]).toBe(String(Buffer.byteLength(sent.body)));
  });

  it("counts every 2xx as success, and only 2xx", async () => {
    for (const [status, ok] of [[200, true], [202, true], [299, true], [300, false], [304, false], [400, false], [410, false]] as const) {
      receiver.handle((_request, response) => response.writeHead(status).end());
      const outcome = await sender.post(webhook(`${receiver.url}/`));
      expect({ status: outcome.status, ok: outcome.ok }).toEqual({ status, ok });
    }
  });

  it("fails on a 500 and records its status", async () => {
    receiver.handle((_request, response) => response.writeHead(500).end("boom"));
    const outcome = await sender.post(webhook(`${receiver.url}/`));
    expect(outcome).toMatchObject({ ok: false, status: 500 });
    expect(outcome.errorClass).toBeUndefined();
  });

  it("never follows a redirect: a 301 is a failed attempt and the target is never called", async () => {
    receiver.handle((request, response) => {
      if (request.path === "/old") response.writeHead(301, { location: "/new" }).end();
      else response.writeHead(200).end();
    });
    const outcome = await sender.post(webhook(`${receiver.url}/old`));
    expect(outcome).toMatchObject({ ok: false, status: 301 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received.map((r) => r.path)).toEqual(["/old"]);
  });

  it("fails with a timeout when no status comes within the receiver timeout", async () => {
    // Reads the request, never answers.
    receiver.handle(() => {});
    const outcome = await sender.post(webhook(`${receiver.url}/slow`));
    expect(outcome).toMatchObject({ ok: false, errorClass: "timeout" });
    expect(outcome.status).toBeUndefined();
    expect(outcome.durationMs).toBeGreaterThanOrEqual(900);
  });

  it("a 2xx that comes after the timeout is still a failure", async () => {
    receiver.handle((_request, response) => {
      setTimeout(() => response.writeHead(200).end(), 1_500).unref();
    });
    const outcome = await sender.post(webhook(`${receiver.url}/late`));
    expect(outcome).toMatchObject({ ok: false, errorClass: "timeout" });
  });

  it("records a refused connection as network, nothing finer (the detail goes to the log only)", async () => {
    const port = await closedPort();
    const outcome = await sender.post(webhook(`https://127.0.0.1:${port}/`));
    expect(outcome).toEqual({ ok: false, errorClass: "network", durationMs: outcome.durationMs });
    expect(outcome.status).toBeUndefined();
  });

  it("never reads or keeps the response body", async () => {
    const marker = "SECRET-RESPONSE-MARKER";
    let finished = false;
    let closed!: () => void;
    const closedEarly = new Promise<void>((resolve) => (closed = resolve));
    receiver.handle((_request, response) => {
      response.on("finish", () => (finished = true));
      response.on("close", () => closed());
      response.writeHead(200, { "content-type": "text/plain" });
      // 64 MiB, far more than any socket buffer: it can only all be sent if the client reads it.
      const chunk = Buffer.alloc(1024 * 1024, `${marker} `);
      let left = 64;
      const pump = () => {
        while (left > 0) {
          left--;
          if (!response.write(chunk)) return void response.once("drain", pump);
        }
        response.end();
      };
      pump();
    });
    const outcome = await sender.post(webhook(`${receiver.url}/big`));
    expect(outcome).toEqual({ ok: true, status: 200, durationMs: outcome.durationMs });
    expect(JSON.stringify(outcome)).not.toContain(marker);
    await closedEarly;
    expect(finished).toBe(false);
  });

  it("records an untrusted certificate as network, like a refused connection (no TLS oracle)", async () => {
    const untrusting = new HttpsWebhookSender({
      policy: new WebhookTargetPolicy({ resolver, allowLoopback: true }),
      timeoutMs: 1_000,
    });
    const outcome = await untrusting.post(webhook(`${receiver.url}/`));
    expect(outcome).toEqual({ ok: false, errorClass: "network", durationMs: outcome.durationMs });
    expect(receiver.received).toHaveLength(0);
  });
});

describe("HTTPS webhook sender: the target policy on every attempt", () => {
  it("refuses loopback without the test-only policy option, before connecting", async () => {
    const production = new HttpsWebhookSender({
      policy: new WebhookTargetPolicy({ resolver }),
      trustedCa: certificate.cert,
    });
    expect(await production.post(webhook(`${receiver.url}/`))).toMatchObject({ ok: false, errorClass: "network" });
    expect(await production.post(webhook(`http://${HOOK_NAME}:${receiver.port}/`))).toMatchObject({
      ok: false,
      errorClass: "network",
    });
    expect(receiver.received).toHaveLength(0);
  });

  it("connects to the address it checked, by name: SNI and Host carry the name, the socket goes to the checked address", async () => {
    // HOOK_NAME exists in no DNS; only the policy's resolver knows it, so the
    // request can only arrive if the socket used the checked address.
    const outcome = await sender.post(webhook(`https://${HOOK_NAME}:${receiver.port}/pinned`));
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    const [request] = receiver.received;
    expect(request?.path).toBe("/pinned");
    expect(request?.headers.host).toBe(`${HOOK_NAME}:${receiver.port}`);
    expect(request?.servername).toBe(HOOK_NAME);
    expect(resolver.calls).toBe(1);
  });

  it("checks again before every attempt: a host that rebinds to a private address is refused and not contacted", async () => {
    resolver.answers = [["127.0.0.1"], ["10.0.0.5"], ["127.0.0.1", "192.168.1.1"]];
    const url = `https://${HOOK_NAME}:${receiver.port}/rebind`;
    expect(await sender.post(webhook(url))).toMatchObject({ ok: true, status: 200 });
    expect(await sender.post(webhook(url))).toMatchObject({ ok: false, errorClass: "network" });
    expect(await sender.post(webhook(url))).toMatchObject({ ok: false, errorClass: "network" });
    expect(receiver.received).toHaveLength(1);
    expect(resolver.calls).toBe(3);
  });

  it("records a host that does not resolve as network", async () => {
    const failing = new HttpsWebhookSender({
      policy: new WebhookTargetPolicy({
        resolver: {
          resolve: async () => {
            throw new Error("getaddrinfo ENOTFOUND");
          },
        },
        allowLoopback: true,
      }),
    });
    expect(await failing.post(webhook(`https://${HOOK_NAME}/`))).toMatchObject({ ok: false, errorClass: "network" });
  });

  it("counts the lookup in the receiver budget: a resolver that never answers is a timeout within the budget", async () => {
    const logged: Record<string, unknown>[] = [];
    const silent = new HttpsWebhookSender({
      policy: new WebhookTargetPolicy({ resolver: { resolve: () => new Promise(() => undefined) }, allowLoopback: true }),
      timeoutMs: 300,
      log: { warn: (details) => logged.push(details) },
    });
    const outcome = await silent.post(webhook(`https://${HOOK_NAME}/`));
    expect(outcome).toMatchObject({ ok: false, errorClass: "timeout" });
    expect(outcome.status).toBeUndefined();
    // The detail went to the log with the delivery id, not into the outcome.
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ errorClass: "timeout" });
    expect(String(logged[0]?.detail)).toContain(HOOK_NAME);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
