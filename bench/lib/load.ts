/**
 * Load generators: autocannon for HTTP/1.1 (the REST routes and the bare
 * baseline) and, only when ghz is missing (bench/lib/ghz.ts drives gRPC
 * otherwise), a small loop of concurrent gRPC callers in this process,
 * whose own CPU then competes with the service's; both for a fixed
 * duration at a fixed number of connections / callers in flight.
 */
import { performance } from "node:perf_hooks";
import autocannon from "autocannon";
import { createClient, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { fromJson, type JsonValue } from "@bufbuild/protobuf";
import { MailService, SendMessageRequestSchema } from "../../src/gen/mail/v1/mail_pb.js";
import { percentile } from "./stats.ts";

export interface LoadResult {
  /** Answers with the expected status per second. */
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly ok: number;
  /** Answers with another status, and transport errors. */
  readonly failed: number;
}

export interface HttpLoad {
  readonly url: string;
  readonly method: "GET" | "POST";
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly connections: number;
  readonly seconds: number;
}

export async function httpLoad(load: HttpLoad): Promise<LoadResult> {
  const result = await autocannon({
    url: load.url,
    method: load.method,
    headers: load.headers,
    ...(load.body !== undefined ? { body: load.body } : {}),
    connections: load.connections,
    duration: load.seconds,
  });
  const ok = result["2xx"];
  return {
    perSecond: ok / load.seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    ok,
    failed: result.non2xx + result.errors + result.timeouts,
  };
}

export interface GrpcSendLoad {
  /** The API's h2c address, `http://host:port`. */
  readonly baseUrl: string;
  readonly secret: string;
  /** The request as the REST route takes it (JSON). */
  readonly body: JsonValue;
  readonly concurrency: number;
  readonly seconds: number;
}

/** SendMessage over gRPC (HTTP/2, binary protobuf): `concurrency` callers, each sending again as soon as it is answered. */
export async function grpcSendLoad(load: GrpcSendLoad): Promise<LoadResult> {
  const auth: Interceptor = (next) => (request) => {
    request.header.set("authorization", `Bearer ${load.secret}`);
    return next(request);
  };
  const client = createClient(MailService, createGrpcTransport({ baseUrl: load.baseUrl, interceptors: [auth] }));
  const request = fromJson(SendMessageRequestSchema, load.body);
  const latencies: number[] = [];
  let ok = 0;
  let failed = 0;
  const started = performance.now();
  const deadline = started + load.seconds * 1000;
  await Promise.all(
    Array.from({ length: load.concurrency }, async () => {
      while (performance.now() < deadline) {
        const started = performance.now();
        try {
          await client.sendMessage(request);
          ok++;
          latencies.push(performance.now() - started);
        } catch {
          failed++;
        }
      }
    }),
  );
  // Per second of the whole run, calls still in flight at the deadline included.
  return { perSecond: ok / ((performance.now() - started) / 1000), p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), ok, failed };
}
