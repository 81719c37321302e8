/**
 * The two doors of SendMessage, transport only: POST /mail/v1/send over
 * REST (autocannon) against SendMessage over gRPC (ghz, a Go process), both
 * against one API process whose listeners, interceptors and handlers are
 * the real ones (src/transport/server.ts, with metrics) in front of stub
 * capabilities (test/transport/stub-api.ts: the key is accepted without a
 * database, a send answers at once). No PostgreSQL, no Temporal: what is
 * left is what each door costs, which is what issue 22 item 5 is about.
 *
 *   node bench/hot-path/doors.ts [--runs 3] [--duration 5] [--connections 32]
 *        [--grpc-connections 1] [--before <dir>] [--profile <dir>]
 *
 * Runs alternate (REST then gRPC, then gRPC then REST...) and the medians
 * are printed with the API process's CPU per answered call, which holds up
 * better than rates on a busy machine. `--before <dir>`: a second API
 * process runs from another checkout (e.g. `git archive HEAD | tar -x -C
 * /tmp/before` with node_modules linked), measured in the same rounds, so
 * a change is compared with what it replaced on the same machine state. `--profile` writes a CPU profile of
 * the API process during the first run of each door
 * (bench/hot-path/profile-on-signal.ts; summarise with profile-summary.ts).
 */
import { type ChildProcess, fork } from "node:child_process";
import { mkdirSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { requireGhz } from "../lib/ghz.ts";
import { httpLoad, type LoadResult } from "../lib/load.ts";
import { cpuSnapshot } from "../lib/processes.ts";
import { ghzSendLoad, SEND_BODY } from "../phases/api-load.ts";

const SELF = import.meta.filename;

const ROOT = path.resolve(import.meta.dirname, "..", "..");

if (process.argv[2] === "--serve") {
  // The API process: real transport, stub capabilities, from the checkout named by argv[3].
  const root = process.argv[3] ?? ROOT;
  const { startStubApi } = (await import(path.join(root, "test/transport/stub-api.ts"))) as typeof import("../../test/transport/stub-api.ts");
  const { createMetrics } = (await import(path.join(root, "src/transport/metrics/registry.ts"))) as typeof import("../../src/transport/metrics/registry.ts");
  const api = await startStubApi({ metrics: createMetrics() });
  process.send?.({ httpUrl: api.httpUrl, grpcUrl: api.grpcUrl });
  process.once("disconnect", () => void api.close().finally(() => process.exit(0)));
} else {
  await main();
}

interface Measured extends LoadResult {
  /** API process CPU (user + system) per answered call, in ms. */
  readonly cpuMsPerCall: number;
  /** The load generator's CPU (autocannon: this process; ghz: its process) per answered call, in ms. */
  readonly clientCpuMsPerCall: number;
}

interface Target {
  readonly label: string;
  readonly pid: number;
  readonly httpUrl: string;
  readonly grpcUrl: string;
  readonly child: ChildProcess;
}

async function startTarget(label: string, root: string, profileDir: string | undefined): Promise<Target> {
  const child = fork(SELF, ["--serve", root], {
    cwd: root,
    execArgv: [
      "--disable-warning=ExperimentalWarning",
      "--max-semi-space-size=4",
      ...(profileDir ? ["--import", path.join(import.meta.dirname, "profile-on-signal.ts")] : []),
    ],
    env: { ...process.env, ...(profileDir ? { HOTPATH_PROFILE_DIR: profileDir, HOTPATH_PROFILE_NAME: `api-${label}` } : {}) },
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${label}: could not start the API process`);
  const urls = await new Promise<{ httpUrl: string; grpcUrl: string }>((resolve, reject) => {
    child.once("message", (message) => resolve(message as { httpUrl: string; grpcUrl: string }));
    child.once("exit", (code) => reject(new Error(`${label}: the API process exited (${code})`)));
  });
  return { label, pid, child, ...urls };
}

async function main(): Promise<void> {
  const { values: args } = parseArgs({
    options: {
      runs: { type: "string", default: "3" },
      duration: { type: "string", default: "5" },
      connections: { type: "string", default: "32" },
      "grpc-connections": { type: "string", default: "1" },
      before: { type: "string" },
      profile: { type: "string" },
    },
  });
  const runs = Number(args.runs);
  const seconds = Number(args.duration);
  const connections = Number(args.connections);
  const grpcConnections = Number(args["grpc-connections"]);
  const profileDir = args.profile ? path.resolve(args.profile) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const ghz = await requireGhz((line) => console.log(line));
  const { GOOD_KEY } = await import("../../test/transport/stub-api.ts");

  const targets: Target[] = [];
  try {
    if (args.before) targets.push(await startTarget("before", path.resolve(args.before), profileDir));
    targets.push(await startTarget("this", ROOT, profileDir));
    /** CPU seconds of the load generator during the last run. */
    let clientCpu = Number.NaN;

    const rest = async (target: Target, duration: number): Promise<LoadResult> => {
      const before = process.cpuUsage();
      const result = await httpLoad({
        url: `${target.httpUrl}/mail/v1/send`,
        method: "POST",
        headers: { authorization: `Bearer ${GOOD_KEY}`, "content-type": "application/json" },
        body: JSON.stringify(SEND_BODY),
        connections,
        seconds: duration,
      });
      const used = process.cpuUsage(before);
      clientCpu = (used.user + used.system) / 1e6;
      return result;
    };
    const grpc = (target: Target, duration: number): Promise<LoadResult> =>
      ghzSendLoad({
        ghz,
        grpcUrl: target.grpcUrl,
        secret: GOOD_KEY,
        concurrency: connections,
        connections: grpcConnections,
        seconds: duration,
        // ghz's whole CPU so far (its start-up, reading the descriptor set, included).
        atDeadline: async (ghzPid) => {
          clientCpu = (await cpuSnapshot()).get(ghzPid)?.seconds ?? Number.NaN;
        },
      });
    const doors = { REST: rest, gRPC: grpc } as const;
    type Door = keyof typeof doors;
    const series = targets.flatMap((target) => (["REST", "gRPC"] as const).map((door) => ({ target, door, results: [] as Measured[] })));
    const label = (item: { target: Target; door: Door }) => (targets.length > 1 ? `${item.target.label} ${item.door}` : item.door);

    const measure = async (target: Target, door: Door, profile: boolean): Promise<Measured> => {
      const apiCpu = async (): Promise<number> => (await cpuSnapshot()).get(target.pid)?.seconds ?? Number.NaN;
      if (profile) process.kill(target.pid, "SIGUSR2");
      const before = await apiCpu();
      const result = await doors[door](target, seconds);
      const spent = (await apiCpu()) - before;
      if (profile) process.kill(target.pid, "SIGUSR2");
      const calls = Math.max(1, result.ok + result.failed);
      return { ...result, cpuMsPerCall: (spent * 1000) / calls, clientCpuMsPerCall: (clientCpu * 1000) / calls };
    };

    // Warm every one (JIT, HTTP/2 session set-up).
    for (const item of series) await doors[item.door](item.target, 2);
    for (let run = 0; run < runs; run++) {
      // A rotating order, so that machine noise hits every series alike.
      const order = series.map((_, i) => series[(i + run) % series.length] as (typeof series)[number]);
      for (const item of order) {
        await sleep(500);
        // The first run of each series is profiled: api-<target>-1 is REST's, -2 gRPC's.
        const result = await measure(item.target, item.door, profileDir !== undefined && run === 0);
        item.results.push(result);
        console.error(
          `run ${run + 1} ${label(item)}: ${result.perSecond.toFixed(0)}/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ` +
            `API CPU ${result.cpuMsPerCall.toFixed(3)} ms per call, client CPU ${result.clientCpuMsPerCall.toFixed(3)} ms per call${result.failed ? `, ${result.failed} failed` : ""}`,
        );
      }
    }
    const median = (values: number[]): number => {
      const sorted = [...values].sort((a, b) => a - b);
      const mid = Math.floor(sorted.length / 2);
      return sorted.length % 2 ? (sorted[mid] ?? Number.NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
    };
    console.log(`${connections} calls in flight, ${runs} x ${seconds} s, gRPC on ${grpcConnections} connection(s) (medians)`);
    const summaries = new Map<string, { perSecond: number; p99: number; cpu: number }>();
    for (const item of series) {
      const list = item.results;
      const s = {
        perSecond: median(list.map((r) => r.perSecond)),
        p50: median(list.map((r) => r.p50Ms)),
        p99: median(list.map((r) => r.p99Ms)),
        cpu: median(list.map((r) => r.cpuMsPerCall)),
      };
      summaries.set(label(item), s);
      console.log(`${label(item)}: ${s.perSecond.toFixed(0)}/s, p50 ${s.p50.toFixed(1)} ms, p99 ${s.p99.toFixed(1)} ms, API CPU ${s.cpu.toFixed(3)} ms per call`);
    }
    for (const target of targets) {
      const prefix = targets.length > 1 ? `${target.label} ` : "";
      const r = summaries.get(`${prefix}REST`);
      const g = summaries.get(`${prefix}gRPC`);
      if (r && g) {
        console.log(
          `${prefix}gRPC / REST: rate ${(g.perSecond / r.perSecond).toFixed(2)}x, p99 ${(g.p99 / r.p99).toFixed(2)}x, API CPU per call ${(g.cpu / r.cpu).toFixed(2)}x`,
        );
      }
    }
  } finally {
    for (const target of targets) {
      const exited = new Promise((resolve) => target.child.once("exit", resolve));
      target.child.disconnect();
      await exited;
    }
  }
}
