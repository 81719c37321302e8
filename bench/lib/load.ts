/**
 * The HTTP/1.1 load generator: autocannon, for the REST routes and the bare
 * baseline, for a fixed duration at a fixed number of connections. gRPC
 * load is ghz's (bench/lib/ghz.ts), a process of its own.
 */
import autocannon from "autocannon";

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

