/**
 * The webhook baseline: the same signed bodies posted by the service's own
 * HTTPS sender (src/adapters/http/webhook-sender.ts: SSRF check, a TLS
 * connection per post, the receiver's answer read) with the worker's
 * activity concurrency, and nothing else: no outbox, no Temporal, no
 * database.
 *
 * A child process of bench/run.ts (so that it does not share an event loop
 * with the receiver): BENCH_HOOK_HOST, BENCH_HOOK_CA_FILE. Over IPC:
 * - `{ mode: "throughput", url, secret, count, concurrency }` -> `{ seconds, failures }`;
 * - `{ mode: "latency", url, secret, count, pauseMs }` -> `{ delaysMs }`: each post
 *   alone, from the moment its body exists to the receiver's answer.
 */
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { HttpsWebhookSender } from "../../src/adapters/http/webhook-sender.ts";
import { WEBHOOK_HEADERS, WEBHOOK_USER_AGENT } from "../../src/capabilities/webhooks/brand.ts";
import { signatureHeader } from "../../src/capabilities/webhooks/signing.ts";
import { WebhookTargetPolicy } from "../../src/capabilities/webhooks/ssrf-policy.ts";
import { serveRequests, stopOnSignal } from "../lib/processes.ts";

const host = process.env.BENCH_HOOK_HOST;
const caFile = process.env.BENCH_HOOK_CA_FILE;
if (!host || !caFile) throw new Error("set BENCH_HOOK_HOST and BENCH_HOOK_CA_FILE");

const sender = new HttpsWebhookSender({
  policy: new WebhookTargetPolicy({
    resolver: {
      resolve: async (hostname) => {
        if (hostname !== host) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        return [{ address: "127.0.0.1", family: 4 }];
      },
    },
    allowLoopback: true,
  }),
  trustedCa: readFileSync(caFile, "utf8"),
});

/** A body like the service's `order.created` event, signed as the service signs it. */
async function postOne(url: string, secret: string): Promise<boolean> {
  const id = randomUUID();
  const order = { number: 1001, total: "49.90", currency: "EUR", lines: [{ sku: "A-1", quantity: 2 }] };
  const body = JSON.stringify({
    id,
    event: "order.created",
    occurredAt: new Date().toISOString(),
    data: { integrationId: "int_1", provider: "woocommerce", order },
  });
  const outcome = await sender.post({
    url,
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": WEBHOOK_USER_AGENT,
      [WEBHOOK_HEADERS.signature]: signatureHeader(body, [secret], Math.floor(Date.now() / 1000)),
      [WEBHOOK_HEADERS.delivery]: id,
      [WEBHOOK_HEADERS.attempt]: "1",
    },
  });
  return outcome.ok;
}

serveRequests(async (message) => {
  const url = String(message.url);
  const secret = String(message.secret);
  const count = Number(message.count);
  if (message.mode === "latency") {
    const delaysMs: number[] = [];
    for (let i = 0; i < count; i++) {
      const started = performance.now();
      await postOne(url, secret);
      delaysMs.push(performance.now() - started);
      await sleep(Number(message.pauseMs ?? 100));
    }
    return { delaysMs };
  }
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Number(message.concurrency) }, async () => {
      for (let i = next++; i < count; i = next++) {
        if (!(await postOne(url, secret))) failures++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failures };
});

stopOnSignal(async () => {});
