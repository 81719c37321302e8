/**
 * The API process under load, against the bare baseline
 * (bench/baselines/bare-send.ts), on a database of its own:
 * POST /mail/v1/send over REST and gRPC, GET /mail/v1/messages/{id} and a
 * list page over REST; then the peak RSS of both processes.
 *
 * No worker polls the task queue of this API process: every accepted
 * message's workflow is started (that is part of what the API does) but
 * never runs, so that the figures are the API process's own, like the
 * baseline's, and not shared with a worker on the same cores.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { findFreePort } from "../../src/runtime/ports.ts";
import { type GhzLoad, ghzLoad, requireGhz } from "../lib/ghz.ts";
import { httpLoad, type LoadResult } from "../lib/load.ts";
import { type Child, cpuSnapshot, cpuSpent, startChild } from "../lib/processes.ts";
import type { Figures } from "../lib/report.ts";
import { API_KEY_PEPPER, setupCompany, startApi } from "../lib/service.ts";
import type { BenchSettings } from "../lib/settings.ts";

const BARE_SEND = path.join(import.meta.dirname, "..", "baselines", "bare-send.ts");
const BARE = "bare Fastify + pg, same statements";
/** Enough for every send of the run (no run sends this many). */
const CREDITS = 100_000_000;
/** Longest wait for the API process to start the workflows of a send run's messages. */
const SETTLE_TIMEOUT_MS = 120_000;

export const SEND_BODY = { to: "delivered@customer.example", subject: "Your receipt", html: "<p>Thank you for your order.</p>" };

/** SendMessage with SEND_BODY under `secret`, driven by ghz against the gRPC listener at `grpcUrl` (this phase's and bench/hot-path/doors.ts's gRPC load). */
export function ghzSendLoad(load: Omit<GhzLoad, "target" | "call" | "data" | "metadata"> & { readonly grpcUrl: string; readonly secret: string }): ReturnType<typeof ghzLoad> {
  const { grpcUrl, secret, ...rest } = load;
  return ghzLoad({ ...rest, target: new URL(grpcUrl).host, call: "mail.v1.MailService/SendMessage", data: SEND_BODY, metadata: { authorization: `Bearer ${secret}` } });
}

/** Issue 11's goals for the hot path. */
const SEND_RATE_TARGET = { ratio: 0.6 };
const SEND_P99_TARGET = { ratio: 1.5 };

export interface ApiLoadContext {
  readonly settings: BenchSettings;
  /** The statement kinds the bare baseline runs (BARE_STATEMENTS); undefined: all. */
  readonly bareKinds: readonly string[] | undefined;
  readonly databaseUrl: string;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  readonly figures: Figures;
  readonly print: (line: string) => void;
}

function record(figures: Figures, id: string, label: string, baselineLabel: string, service: LoadResult, bare: LoadResult, targets: { rate?: { ratio: number }; p99?: { ratio: number } } = {}): void {
  figures.add(`${id}.rate`, { label: `${label}, answered`, unit: "req/s", better: "higher", baselineLabel, ...(targets.rate ? { target: targets.rate } : {}) }, service.perSecond, bare.perSecond);
  figures.add(`${id}.p50`, { label: `${label}, p50`, unit: "ms", better: "lower", baselineLabel }, service.p50Ms, bare.p50Ms);
  figures.add(`${id}.p99`, { label: `${label}, p99`, unit: "ms", better: "lower", baselineLabel, ...(targets.p99 ? { target: targets.p99 } : {}) }, service.p99Ms, bare.p99Ms);
  if (service.failed > 0) figures.note(`${id}.rate`, `service: ${service.failed} failed answers in one run`);
  if (bare.failed > 0) figures.note(`${id}.rate`, `baseline: ${bare.failed} failed answers in one run`);
}

function line(label: string, result: LoadResult): string {
  return `${label}: ${result.perSecond.toFixed(0)}/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms${result.failed ? `, ${result.failed} failed` : ""}`;
}

export interface ApiLoadPeaks {
  readonly apiPeakMb: number;
  readonly barePeakMb: number;
}

export async function measureApiLoad(ctx: ApiLoadContext): Promise<ApiLoadPeaks> {
  const { settings, figures, print } = ctx;
  const phases = settings.phases;
  const api = await startApi({ databaseUrl: ctx.databaseUrl, temporalAddress: ctx.temporalAddress, taskQueue: ctx.taskQueue, verbose: settings.verbose }, "api (load)");
  const barePort = await findFreePort();
  const bareUrl = `http://127.0.0.1:${barePort}`;
  let bare: Child;
  try {
    bare = await startChild({
      name: "bare baseline",
      script: BARE_SEND,
      env: {
        ...process.env,
        DATABASE_URL: ctx.databaseUrl,
        API_KEY_PEPPER,
        PORT: String(barePort),
        ...(ctx.bareKinds ? { BARE_STATEMENTS: ctx.bareKinds.join(",") } : {}),
      },
      readyCheck: async () => (await fetch(`${bareUrl}/livez`)).ok,
      verbose: settings.verbose,
    });
  } catch (error) {
    await api.child.stop();
    throw error;
  }
  const peaks = { apiPeakMb: Number.NaN, barePeakMb: Number.NaN };
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  try {
    await db.connect();
    const { secret } = await setupCompany(api.operatorUrl, CREDITS);
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const connections = settings.connections;
    const body = JSON.stringify(SEND_BODY);
    /**
     * The API process starts each accepted message's workflow after its 202,
     * so it is still busy when a send run ends: the next measurement (the
     * baseline's, on the same two cores) starts once every workflow is.
     */
    const settle = async (): Promise<void> => {
      const started = performance.now();
      for (;;) {
        const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from message where workflow_started_at is null`);
        const left = rows[0]?.n ?? 0;
        if (left === 0) break;
        if (performance.now() - started > SETTLE_TIMEOUT_MS) {
          print(`  !!! ${left} accepted messages still have no workflow ${SETTLE_TIMEOUT_MS / 1000} s after the run; going on`);
          break;
        }
        await sleep(100);
      }
      const seconds = (performance.now() - started) / 1000;
      if (seconds >= 1) print(`  (the API process took ${seconds.toFixed(1)} s after the run to start the last workflows)`);
    };
    /**
     * Where the CPU went during a measured run (not the settling after it):
     * the service's API process and the Temporal server it starts workflows
     * on, or the baseline; PostgreSQL; the load generator (this process).
     */
    const cpuLine = (spent: Map<string, number>, seconds: number, answered: number, server: "api" | "bare"): string => {
      const shown = ["api", "bare", "temporal", "postgres", "load generator"].filter((name) => (spent.get(name) ?? 0) >= 0.05);
      // CPU per answer holds up better than rates on a busy machine (REST and gRPC compare on it).
      const perAnswer = answered > 0 ? `; ${(((spent.get(server) ?? 0) * 1000) / answered).toFixed(2)} ms of ${server} CPU per answer` : "";
      return `    CPU in the run: ${shown.map((name) => `${name} ${(spent.get(name) ?? 0).toFixed(1)} s`).join(", ")} (of ${(seconds * 2).toFixed(0)} core-seconds)${perAnswer}`;
    };
    let lastCpu = "";
    /**
     * BENCH_PROFILE_RUNS=1 with the API started under
     * bench/hot-path/profile-on-signal.ts (NODE_OPTIONS=--import=...,
     * HOTPATH_PROFILE_DIR): a CPU profile of the API process during the first
     * measured REST run and the first gRPC run (api-1, api-2...), for
     * bench/hot-path/profile-summary.ts.
     */
    const profiling = process.env.BENCH_PROFILE_RUNS === "1";
    let profileNext = false;
    /** Runs one load, profiled when profileNext was set (the settling after it is not in the profile). */
    const maybeProfiled = async <T>(measure: () => Promise<T>): Promise<T> => {
      if (!profileNext) return measure();
      profileNext = false;
      process.kill(api.child.pid, "SIGUSR2");
      try {
        return await measure();
      } finally {
        process.kill(api.child.pid, "SIGUSR2");
      }
    };
    const profiled = async <T>(run: number, measure: () => Promise<T>): Promise<T> => {
      profileNext = profiling && run === 1;
      return measure();
    };
    const send = async (baseUrl: string, seconds: number): Promise<LoadResult> => {
      const before = await cpuSnapshot();
      const result = await maybeProfiled(() => httpLoad({ url: `${baseUrl}/mail/v1/send`, method: "POST", headers, body, connections, seconds }));
      lastCpu = cpuLine(cpuSpent(before, await cpuSnapshot(), { api: api.child.pid, bare: bare.pid, "load generator": process.pid }), seconds, result.ok, baseUrl === api.httpUrl ? "api" : "bare");
      if (baseUrl === api.httpUrl) await settle();
      return result;
    };
    /**
     * SendMessage over gRPC with ghz, a Go process (bench/lib/ghz.ts): the
     * same body, the same key (as `authorization` metadata, as the REST
     * phase sends it), the same calls in flight and duration as the REST
     * runs, on one HTTP/2 connection as a gRPC client does. No
     * Idempotency-Key, like the REST phase. Installed when missing: a Node
     * client in this process would carry its own cost into the figure.
     */
    const ghz = phases.has("grpc") ? await requireGhz(print) : undefined;
    const grpcClient = "ghz";
    const grpc = async (seconds: number): Promise<LoadResult> => {
      if (!ghz) throw new Error("the gRPC phase needs ghz");
      const before = await cpuSnapshot();
      let spent = new Map<string, number>();
      const result = await maybeProfiled(() => ghzSendLoad({
        ghz,
        grpcUrl: api.grpcUrl,
        secret,
        concurrency: connections,
        connections: 1,
        seconds,
        atDeadline: async (pid) => {
          spent = cpuSpent(before, await cpuSnapshot(), { api: api.child.pid, "load generator": pid });
        },
      }));
      lastCpu = cpuLine(spent, seconds, result.ok, "api");
      await settle();
      return result;
    };
    const get = (url: string, seconds: number) => httpLoad({ url, method: "GET", headers: { authorization: headers.authorization }, connections, seconds });

    const bareSends: LoadResult[] = [];
    if (phases.has("send") || phases.has("grpc")) {
      print(`POST /mail/v1/send, ${connections} connections, ${settings.sendSeconds} s per run`);
      await send(api.httpUrl, settings.warmupSeconds);
      await send(bareUrl, settings.warmupSeconds);
      if (phases.has("grpc")) await grpc(settings.warmupSeconds);
      for (let run = 1; run <= settings.runs; run++) {
        const bareRun = await send(bareUrl, settings.sendSeconds);
        bareSends.push(bareRun);
        print(`  run ${run} ${line("bare", bareRun)}`);
        print(lastCpu);
        if (phases.has("send")) {
          const rest = await profiled(run, () => send(api.httpUrl, settings.sendSeconds));
          print(`  run ${run} ${line("REST", rest)}`);
          print(lastCpu);
          record(figures, "send.rest", "POST /mail/v1/send REST", BARE, rest, bareRun, { rate: SEND_RATE_TARGET, p99: SEND_P99_TARGET });
        }
        if (phases.has("grpc")) {
          const overGrpc = await profiled(run, () => grpc(settings.sendSeconds));
          print(`  run ${run} ${line(`gRPC (${grpcClient})`, overGrpc)}`);
          print(lastCpu);
          record(figures, "send.grpc", "SendMessage gRPC", `${BARE} (REST, autocannon)`, overGrpc, bareRun, { rate: SEND_RATE_TARGET, p99: SEND_P99_TARGET });
          if (!ghz) figures.note("send.grpc.rate", "client: the Node loop in the benchmark's process (ghz not found); not comparable with REST");
        }
      }
    }

    if (phases.has("reads")) {
      // A message to read, and a log with at least a page of messages.
      const answers = await Promise.all(
        Array.from({ length: 30 }, async () => (await (await fetch(`${api.httpUrl}/mail/v1/send`, { method: "POST", headers, body })).json()) as { id: string }),
      );
      const id = answers[0]?.id;
      if (!id) throw new Error(`no message id from POST /mail/v1/send: ${JSON.stringify(answers[0])}`);
      // The sends above filled a fresh table; autovacuum may not have analysed it
      // yet, and a planner that thinks it empty sorts it whole for every page.
      await settle();
      await db.query("vacuum (analyze) message");
      const routes: [string, string, string][] = [
        ["read.get", "GET /mail/v1/messages/{id}", `/mail/v1/messages/${id}`],
        ["read.list", "GET /mail/v1/messages (25 per page)", `/mail/v1/messages?limit=25`],
      ];
      for (const [figure, label, route] of routes) {
        print(`${label}, ${connections} connections, ${settings.readSeconds} s per run`);
        await get(`${api.httpUrl}${route}`, settings.warmupSeconds);
        await get(`${bareUrl}${route}`, settings.warmupSeconds);
        for (let run = 1; run <= settings.runs; run++) {
          const bareRun = await get(`${bareUrl}${route}`, settings.readSeconds);
          const service = await get(`${api.httpUrl}${route}`, settings.readSeconds);
          print(`  run ${run} ${line("service", service)} | ${line("bare", bareRun)}`);
          record(figures, figure, label, BARE, service, bareRun);
        }
      }
    }
  } finally {
    await db.end().catch(() => undefined);
    // Read before they stop (VmHWM: the peak since the process started).
    peaks.apiPeakMb = await api.child.stop();
    peaks.barePeakMb = await bare.stop();
  }
  return peaks;
}
