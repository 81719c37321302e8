/**
 * One autocannon run of POST /mail/v1/send: accepted (202) answers per
 * second and the latency percentiles of all answers.
 */
import autocannon from "autocannon";

export interface LoadResult {
  readonly acceptedPerSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly non2xx: number;
  readonly errors: number;
}

export interface LoadOptions {
  readonly url: string;
  readonly secret: string;
  readonly connections?: number;
  readonly durationSeconds?: number;
}

export const SEND_BODY = JSON.stringify({
  to: "delivered@customer.example",
  subject: "Your receipt",
  html: "<p>Thank you for your order.</p>",
});

export async function loadSend(options: LoadOptions): Promise<LoadResult> {
  const duration = options.durationSeconds ?? 10;
  const result = await autocannon({
    url: `${options.url}/mail/v1/send`,
    method: "POST",
    connections: options.connections ?? 32,
    duration,
    headers: { authorization: `Bearer ${options.secret}`, "content-type": "application/json" },
    body: SEND_BODY,
  });
  const accepted = result["2xx"];
  return {
    acceptedPerSecond: accepted / duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
