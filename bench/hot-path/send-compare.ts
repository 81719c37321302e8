/**
 * POST /mail/v1/send of the service against the bare baseline
 * (bench/baselines/bare-send.ts with every statement), in back-to-back paired runs on one
 * machine, with each process's peak RSS:
 *
 *   node bench/hot-path/send-compare.ts [--runs 3] [--duration 10] [--connections 32]
 *        [--combined] [--no-worker] [--drain] [--profile <dir>] [--json <file>]
 *        [--tree <label>=<dir> ...] [--env <label>:<NAME>=<value> ...]
 *
 * The API (src/api-main.ts) and the worker (src/worker-main.ts) run as
 * separate processes on a throw-away database and a Temporal dev server;
 * `--combined` runs the worker inside the API process (RUN_WORKER=true, as
 * `npm start` does); `--no-worker` runs no worker at all (workflows queue
 * in Temporal), which isolates the accept path. `--drain` waits, after each
 * run, until the worker has sent what the run accepted, so a backlog does
 * not load the next run. `--profile` writes a CPU profile of each process
 * of the last target, taken during its first measured run only
 * (bench/hot-path/profile-on-signal.ts), into the directory; summarise it
 * with bench/hot-path/profile-summary.ts.
 *
 * `--tree` compares checkouts: each named tree's service runs from that
 * directory, on a database of its own (e.g. `--tree before=/tmp/before
 * --tree after=.`); default: this checkout only. Every round measures each
 * tree and the bare baseline back to back, in a rotating order, and the
 * medians are compared, so machine noise hits all of them alike.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { startTemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { loadSend, type LoadResult } from "./load.ts";
import {
  median,
  ROOT,
  rssSampler,
  scratchDatabase,
  seedSender,
  serviceEnv,
  sleep,
  spawnNode,
  treesFrom,
  type Child,
  type ScratchDatabase,
} from "./stack.ts";
import { findFreePort } from "../../src/runtime/ports.ts";

const { values: args } = parseArgs({
  options: {
    runs: { type: "string", default: "3" },
    duration: { type: "string", default: "10" },
    connections: { type: "string", default: "32" },
    combined: { type: "boolean", default: false },
    "no-worker": { type: "boolean", default: false },
    drain: { type: "boolean", default: false },
    profile: { type: "string" },
    json: { type: "string" },
    "pool-max": { type: "string", default: "10" },
    tree: { type: "string", multiple: true },
    /** `<label>:<NAME>=<value>`: an environment variable of one tree's processes only (e.g. NODE_OPTIONS). */
    env: { type: "string", multiple: true },
    "log-level": { type: "string", default: "info" },
  },
});
const runs = Number(args.runs);
const duration = Number(args.duration);
const connections = Number(args.connections);
const profileDir = args.profile ? path.resolve(args.profile) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const trees = treesFrom(args.tree, args.env);

interface Target {
  readonly label: string;
  readonly url: string;
  readonly secret: string;
  readonly pids: Record<string, number>;
  readonly db: ScratchDatabase;
  readonly results: LoadResult[];
  peaks: Record<string, number>;
}

async function drained(db: ScratchDatabase): Promise<void> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    for (;;) {
      const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from message where status in ('queued', 'processing', 'deferred')`);
      if ((rows[0]?.n ?? 0) === 0) return;
      await sleep(500);
    }
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const temporal = await startTemporalDevServer({});
  const children: Child[] = [];
  const databases: ScratchDatabase[] = [];
  try {
    const targets: Target[] = [];
    let bareUrl = "";
    let barePid = 0;
    const barePeak = { rss: 0 };
    let bareSecret = "";
    for (const [index, tree] of trees.entries()) {
      const db = await scratchDatabase();
      databases.push(db);
      const seeded = await seedSender(db.url, 100_000_000);
      const env = serviceEnv(db.url, temporal.address, {
        RUN_WORKER: args.combined ? "true" : "false",
        API_POOL_MAX: args["pool-max"],
        LOG_LEVEL: args["log-level"],
        ...tree.extra,
      });
      const last = index === trees.length - 1;
      const profiled = (name: string) =>
        profileDir && last
          ? {
              nodeArgs: ["--import", path.join(ROOT, "bench/hot-path/profile-on-signal.ts")],
              env: { ...env, HOTPATH_PROFILE_DIR: profileDir, HOTPATH_PROFILE_NAME: name },
            }
          : { env };
      const api = spawnNode(path.join(tree.root, "src/api-main.ts"), [], { label: `${tree.label} api`, quiet: true, cwd: tree.root, ...profiled("api") });
      children.push(api);
      const url = await api.waitFor(/API listening: (http:\/\/\S+) /);
      const pids: Record<string, number> = { api: api.pid };
      if (!args.combined && !args["no-worker"]) {
        const worker = spawnNode(path.join(tree.root, "src/worker-main.ts"), [], { label: `${tree.label} worker`, quiet: true, cwd: tree.root, ...profiled("worker") });
        children.push(worker);
        await worker.waitFor(/^(worker running)/);
        pids.worker = worker.pid;
      }
      targets.push({ label: tree.label, url, secret: seeded.secret, pids, db, results: [], peaks: {} });
      if (last) {
        // bench/run.ts's baseline with every statement (BARE_STATEMENTS unset): those of an uncached send.
        const bareEnv: NodeJS.ProcessEnv = { ...env, DATABASE_URL: db.url, API_KEY_PEPPER: seeded.apiKeyPepper, PORT: String(await findFreePort()), POOL_MAX: args["pool-max"] };
        delete bareEnv.BARE_STATEMENTS;
        const bare = spawnNode("bench/baselines/bare-send.ts", [], { env: bareEnv, label: "bare", quiet: true });
        children.push(bare);
        bareUrl = await bare.waitFor(/bare baseline listening on (\S+)/);
        barePid = bare.pid;
        bareSecret = seeded.secret;
      }
    }

    // Warm every one (JIT, prepared statements, pools).
    for (const target of targets) await loadSend({ url: target.url, secret: target.secret, connections, durationSeconds: 3 });
    await loadSend({ url: bareUrl, secret: bareSecret, connections, durationSeconds: 3 });
    for (const target of targets) if (args.drain && !args["no-worker"]) await drained(target.db);

    const baseline: LoadResult[] = [];
    const entries = [...targets.map((target) => ({ target })), { target: undefined }];
    for (let run = 0; run < runs; run++) {
      const order = entries.map((_, i) => entries[(i + run) % entries.length] as { target: Target | undefined });
      for (const { target } of order) {
        await sleep(1_000);
        const profiling = profileDir !== undefined && run === 0 && target === targets[targets.length - 1];
        if (profiling && target) for (const pid of Object.values(target.pids)) process.kill(pid, "SIGUSR2");
        const sampler = rssSampler(target ? target.pids : { bare: barePid });
        const result = await loadSend({
          url: target?.url ?? bareUrl,
          secret: target?.secret ?? bareSecret,
          connections,
          durationSeconds: duration,
        });
        if (profiling && target) for (const pid of Object.values(target.pids)) process.kill(pid, "SIGUSR2");
        const peaks = sampler.stop();
        if (!target) barePeak.rss = Math.max(barePeak.rss, peaks.bare ?? 0);
        if (target) {
          for (const [name, mb] of Object.entries(peaks)) target.peaks[name] = Math.max(target.peaks[name] ?? 0, mb);
          if (args.drain && !args["no-worker"]) {
            // The worker keeps working on what was accepted: its RSS under that load counts too.
            const draining = rssSampler(target.pids);
            await drained(target.db);
            for (const [name, mb] of Object.entries(draining.stop())) target.peaks[name] = Math.max(target.peaks[name] ?? 0, mb);
          }
        }
        (target ? target.results : baseline).push(result);
        console.error(
          `run ${run + 1} ${target?.label ?? "bare"}: ${result.acceptedPerSecond.toFixed(0)}/s p50 ${result.p50} ms p99 ${result.p99} ms non-2xx ${result.non2xx} errors ${result.errors}`,
        );
      }
    }

    const m = (list: LoadResult[], key: keyof LoadResult) => median(list.map((r) => r[key]));
    const bare = {
      acceptedPerSecond: m(baseline, "acceptedPerSecond"),
      p50: m(baseline, "p50"),
      p99: m(baseline, "p99"),
      peakRssMb: barePeak.rss,
      all: baseline,
    };
    const summary = {
      mode: args.combined ? "combined" : args["no-worker"] ? "api only" : "api + worker",
      connections,
      durationSeconds: duration,
      runs,
      logLevel: args["log-level"],
      bare,
      targets: targets.map((t) => ({
        label: t.label,
        acceptedPerSecond: m(t.results, "acceptedPerSecond"),
        p50: m(t.results, "p50"),
        p99: m(t.results, "p99"),
        peakRssMb: t.peaks,
        all: t.results,
      })),
    };
    const lines = [`mode: ${summary.mode}, ${connections} connections, ${runs} x ${duration} s, LOG_LEVEL=${summary.logLevel} (medians)`];
    lines.push(`bare: ${bare.acceptedPerSecond.toFixed(0)} accepted/s, p50 ${bare.p50} ms, p99 ${bare.p99} ms, peak RSS ${bare.peakRssMb.toFixed(0)} MB`);
    for (const t of summary.targets) {
      lines.push(
        `${t.label}: ${t.acceptedPerSecond.toFixed(0)} accepted/s (${(t.acceptedPerSecond / bare.acceptedPerSecond).toFixed(2)} of bare), ` +
          `p50 ${t.p50} ms, p99 ${t.p99} ms (${(t.p99 / bare.p99).toFixed(2)}x bare), peak RSS ` +
          Object.entries(t.peakRssMb)
            .map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`)
            .join(", "),
      );
    }
    console.log(lines.join("\n"));
    if (args.json) writeFileSync(path.resolve(ROOT, args.json), JSON.stringify(summary, null, 2));
  } finally {
    for (const child of children.reverse()) await child.stop();
    await temporal.stop();
    for (const db of databases) await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
