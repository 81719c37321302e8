/**
 * End to end, 202 to `sent`, against the rate at which the same Temporal
 * server completes an empty workflow with one empty activity (each with a
 * worker process of its own), in back-to-back paired runs:
 *
 *   node bench/hot-path/end-to-end.ts [--messages 1000] [--runs 3] [--concurrency 32]
 *        [--tree <label>=<dir> ...] [--env <label>:<NAME>=<value> ...] [--profile <dir>] [--json <file>]
 *
 * Service: N sends through the API (src/api-main.ts, RUN_WORKER=false) as
 * fast as `concurrency` clients go, timed from the first send until the
 * worker (src/worker-main.ts) has every one of them `sent` (or delivered).
 * Baseline: N empty workflows started by `concurrency` starters, timed
 * until the last one completed. Also the peak RSS of each worker and API.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Client, Connection } from "@temporalio/client";
import pg from "pg";
import { startTemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { SEND_BODY } from "./load.ts";
import { median, ROOT, rssSampler, scratchDatabase, seedSender, serviceEnv, sleep, spawnNode, treesFrom, type Child, type ScratchDatabase } from "./stack.ts";

const { values: args } = parseArgs({
  options: {
    messages: { type: "string", default: "1000" },
    runs: { type: "string", default: "3" },
    concurrency: { type: "string", default: "32" },
    tree: { type: "string", multiple: true },
    /** `<label>:<NAME>=<value>`: an environment variable of one tree's processes only. */
    env: { type: "string", multiple: true },
    profile: { type: "string" },
    json: { type: "string" },
  },
});
const total = Number(args.messages);
const runs = Number(args.runs);
const concurrency = Number(args.concurrency);
const profileDir = args.profile ? path.resolve(args.profile) : undefined;
if (profileDir) mkdirSync(profileDir, { recursive: true });
const trees = treesFrom(args.tree, args.env);

interface ServiceTarget {
  readonly label: string;
  readonly url: string;
  readonly secret: string;
  readonly db: ScratchDatabase;
  readonly pids: Record<string, number>;
  readonly rates: number[];
  readonly peaks: Record<string, number>;
}

/** Runs `work` `count` times with `concurrency` at once. */
async function pooled(count: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) await work(i);
    }),
  );
}

async function sentCount(client: pg.Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(`select count(*)::int as n from message where status in ('sent', 'delivered')`);
  return rows[0]?.n ?? 0;
}

/** Sends `count` messages and answers messages per second from the first send to the last `sent`. */
async function serviceRun(target: ServiceTarget, count: number): Promise<number> {
  const client = new pg.Client({ connectionString: target.db.url });
  await client.connect();
  try {
    const before = await sentCount(client);
    const started = performance.now();
    await pooled(count, async () => {
      const response = await fetch(`${target.url}/mail/v1/send`, {
        method: "POST",
        headers: { authorization: `Bearer ${target.secret}`, "content-type": "application/json" },
        body: SEND_BODY,
      });
      if (response.status !== 202) throw new Error(`send answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    });
    while ((await sentCount(client)) < before + count) await sleep(50);
    return count / ((performance.now() - started) / 1000);
  } finally {
    await client.end();
  }
}

/** Starts `count` empty workflows and answers completed workflows per second. */
async function emptyRun(client: Client, taskQueue: string, count: number, run: number): Promise<number> {
  const started = performance.now();
  const results: Promise<unknown>[] = [];
  await pooled(count, async (i) => {
    const handle = await client.workflow.start("emptyWorkflow", { taskQueue, workflowId: `empty-${run}-${i}-${Date.now()}` });
    results.push(handle.result());
  });
  await Promise.all(results);
  return count / ((performance.now() - started) / 1000);
}

async function main(): Promise<void> {
  const temporal = await startTemporalDevServer({});
  const children: Child[] = [];
  const databases: ScratchDatabase[] = [];
  const connection = await Connection.connect({ address: temporal.address });
  try {
    const client = new Client({ connection });
    const emptyQueue = `hotpath-empty-${process.pid}`;
    const emptyWorker = spawnNode("bench/hot-path/empty/worker.ts", [temporal.address, emptyQueue], { env: process.env, label: "empty", quiet: true });
    children.push(emptyWorker);
    await emptyWorker.waitFor(/^(empty worker running)/);

    const targets: ServiceTarget[] = [];
    for (const [index, tree] of trees.entries()) {
      const db = await scratchDatabase();
      databases.push(db);
      const seeded = await seedSender(db.url, 100_000_000);
      const env = serviceEnv(db.url, temporal.address, { RUN_WORKER: "false", ...tree.extra });
      const last = index === trees.length - 1;
      const profiled = (name: string) =>
        profileDir && last
          ? {
              nodeArgs: ["--import", path.join(ROOT, "bench/hot-path/profile-on-signal.ts")],
              env: { ...env, HOTPATH_PROFILE_DIR: profileDir, HOTPATH_PROFILE_NAME: `e2e-${name}` },
            }
          : { env };
      const api = spawnNode(path.join(tree.root, "src/api-main.ts"), [], { label: `${tree.label} api`, quiet: true, cwd: tree.root, ...profiled("api") });
      children.push(api);
      const url = await api.waitFor(/API listening: (http:\/\/\S+) /);
      const worker = spawnNode(path.join(tree.root, "src/worker-main.ts"), [], { label: `${tree.label} worker`, quiet: true, cwd: tree.root, ...profiled("worker") });
      children.push(worker);
      await worker.waitFor(/^(worker running)/);
      targets.push({ label: tree.label, url, secret: seeded.secret, db, pids: { api: api.pid, worker: worker.pid }, rates: [], peaks: {} });
    }

    // Warm every one (bundles, JIT, pools, caches).
    for (const target of targets) await serviceRun(target, 100);
    await emptyRun(client, emptyQueue, 100, -1);

    const emptyRates: number[] = [];
    const emptyPeak = { worker: 0 };
    const entries: (ServiceTarget | undefined)[] = [...targets, undefined];
    for (let run = 0; run < runs; run++) {
      for (let i = 0; i < entries.length; i++) {
        const target = entries[(i + run) % entries.length];
        await sleep(1_000);
        const profiling = profileDir !== undefined && run === 0 && target !== undefined && target === targets[targets.length - 1];
        if (profiling && target) for (const pid of Object.values(target.pids)) process.kill(pid, "SIGUSR2");
        const sampler = rssSampler(target ? target.pids : { worker: emptyWorker.pid });
        const rate = target ? await serviceRun(target, total) : await emptyRun(client, emptyQueue, total, run);
        const peaks = sampler.stop();
        if (profiling && target) for (const pid of Object.values(target.pids)) process.kill(pid, "SIGUSR2");
        if (target) {
          target.rates.push(rate);
          for (const [name, mb] of Object.entries(peaks)) target.peaks[name] = Math.max(target.peaks[name] ?? 0, mb);
        } else {
          emptyRates.push(rate);
          emptyPeak.worker = Math.max(emptyPeak.worker, peaks.worker ?? 0);
        }
        console.error(`run ${run + 1} ${target?.label ?? "empty workflow"}: ${rate.toFixed(1)}/s`);
      }
    }

    const empty = median(emptyRates);
    const summary = {
      messages: total,
      concurrency,
      runs,
      emptyWorkflow: { perSecond: empty, all: emptyRates, peakWorkerRssMb: emptyPeak.worker },
      targets: targets.map((t) => ({ label: t.label, perSecond: median(t.rates), all: t.rates, peakRssMb: t.peaks })),
    };
    const lines = [`end to end, ${total} messages, ${concurrency} senders, ${runs} runs (medians)`];
    lines.push(`empty workflow + activity: ${empty.toFixed(1)}/s, worker peak RSS ${emptyPeak.worker.toFixed(0)} MB`);
    for (const t of summary.targets) {
      lines.push(
        `${t.label}: 202 to sent ${t.perSecond.toFixed(1)}/s (${(t.perSecond / empty).toFixed(2)} of the empty workflow), peak RSS ` +
          Object.entries(t.peakRssMb)
            .map(([name, mb]) => `${name} ${mb.toFixed(0)} MB`)
            .join(", "),
      );
    }
    console.log(lines.join("\n"));
    if (args.json) writeFileSync(path.resolve(ROOT, args.json), JSON.stringify(summary, null, 2));
  } finally {
    await connection.close();
    for (const child of children.reverse()) await child.stop();
    await temporal.stop();
    for (const db of databases) await db.drop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
