/**
 * `npm run bench:attachments`: POST /mail/v1/send with a 1 MB attachment
 * beside the same send without one, in the same run, on the same processes
 * (the API process and a worker, src/api-main.ts and bench/processes/worker.ts,
 * on a scratch database and a Temporal dev server, simulator provider):
 *
 * 1. acceptance under load: autocannon at BENCH_CONNECTIONS (default 8)
 *    for BENCH_DURATION seconds (default 10) per run, the two bodies
 *    alternately, BENCH_RUNS times (default 3); answers per second, p50,
 *    p99, and the API process's CPU per answer;
 * 2. end to end: BENCH_MESSAGES (default 100) sends of each kind, 8 at a
 *    time, then the time from acceptance (created_at) to handoff (sent_at)
 *    of each, read from the database: the handoff reads the file back and
 *    builds the MIME message with it.
 *
 * Figures are printed as median [min-max] with the ratio with / without
 * (the same table as npm run bench); docs/benchmarks.md keeps the ones
 * worth keeping. Never point it at a real database: it makes its own.
 */
import { randomBytes } from "node:crypto";
import { rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { startTemporalDevServer } from "../src/runtime/temporal-dev-server.ts";
import { makeTestCertificate } from "../test/adapters/http/https-receiver.ts";
import { createScratchDatabase } from "./lib/database.ts";
import { httpLoad, type LoadResult } from "./lib/load.ts";
import { cpuSnapshot, cpuSpent } from "./lib/processes.ts";
import { Figures, formatTable } from "./lib/report.ts";
import { setupCompany, startApi, startWorker } from "./lib/service.ts";
import { percentile } from "./lib/stats.ts";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const seconds = Number(process.env.BENCH_DURATION ?? 10);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
const messages = Number(process.env.BENCH_MESSAGES ?? 100);
const print = (line: string): void => console.log(line);

/** 1 MB (10^6 bytes) of incompressible bytes, as a PDF or a photo is. */
const FILE = randomBytes(1_000_000);
const PLAIN = { to: "ada@customer.example", subject: "Your receipt", html: "<p>Thanks for your order.</p>", text: "Thanks for your order." };
const WITH_FILE = { ...PLAIN, attachments: [{ filename: "receipt.pdf", contentType: "application/pdf", content: FILE.toString("base64") }] };
const BODIES = { without: JSON.stringify(PLAIN), with: JSON.stringify(WITH_FILE) } as const;
type Kind = keyof typeof BODIES;

async function main(): Promise<void> {
  print(`bench:attachments: ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}, ${runs} run(s) of ${seconds} s, ${connections} connections; body with the file ${(BODIES.with.length / 1e6).toFixed(2)} MB, without ${BODIES.without.length} B`);
  const cleanup: (() => Promise<unknown>)[] = [];
  try {
    const database = await createScratchDatabase("mail_bench_attachments");
    cleanup.push(() => database.drop());
    const temporal = await startTemporalDevServer();
    cleanup.push(() => temporal.stop());
    const settings = { databaseUrl: database.url, temporalAddress: temporal.address, taskQueue: `bench-${randomBytes(3).toString("hex")}`, verbose: false };
    const api = await startApi(settings);
    cleanup.push(() => api.child.stop());
    // The worker posts no webhook here; it wants a receiver's host and certificate all the same.
    const certificate = await makeTestCertificate(["hooks.bench.example"]);
    const caFile = path.join(os.tmpdir(), `mail-bench-attachments-${process.pid}.pem`);
    await writeFile(caFile, certificate.cert);
    cleanup.push(() => rm(caFile, { force: true }));
    const worker = await startWorker(settings, { host: "hooks.bench.example", caFile });
    cleanup.push(() => worker.stop());
    const { secret } = await setupCompany(api.operatorUrl, 10_000_000);
    const headers = { authorization: `Bearer ${secret}`, "content-type": "application/json" };
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanup.push(() => db.end());

    /** Until every accepted message was handed over, so that one kind's run does not pay for the other's handoffs. */
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 1200; i++) {
        const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from message where status in ('queued', 'deferred', 'processing')`);
        if ((rows[0]?.n ?? 0) === 0) return;
        await sleep(100);
      }
      print("  !!! messages still waiting for their handoff two minutes after the run; going on");
    };

    const figures = new Figures();
    const load = async (kind: Kind, duration: number): Promise<{ result: LoadResult; cpuMs: number }> => {
      const before = await cpuSnapshot();
      const result = await httpLoad({ url: `${api.httpUrl}/mail/v1/send`, method: "POST", headers, body: BODIES[kind], connections, seconds: duration });
      const spent = cpuSpent(before, await cpuSnapshot(), { api: api.child.pid });
      await settle();
      return { result, cpuMs: result.ok > 0 ? ((spent.get("api") ?? 0) * 1000) / result.ok : 0 };
    };
    print("\n--- acceptance under load (warm-up first)");
    await load("without", 2);
    await load("with", 2);
    for (let run = 1; run <= runs; run++) {
      const without = await load("without", seconds);
      const withFile = await load("with", seconds);
      print(`  run ${run}: without ${line(without)}; with 1 MB ${line(withFile)}`);
      const baselineLabel = "the same send without a file";
      figures.add("send.rate", { label: "POST /mail/v1/send with a 1 MB file, answered", unit: "req/s", better: "higher", baselineLabel }, withFile.result.perSecond, without.result.perSecond);
      figures.add("send.p50", { label: "POST /mail/v1/send with a 1 MB file, p50", unit: "ms", better: "lower", baselineLabel }, withFile.result.p50Ms, without.result.p50Ms);
      figures.add("send.p99", { label: "POST /mail/v1/send with a 1 MB file, p99", unit: "ms", better: "lower", baselineLabel }, withFile.result.p99Ms, without.result.p99Ms);
      figures.add("send.cpu", { label: "API CPU per accepted send with a 1 MB file", unit: "ms", better: "lower", baselineLabel }, withFile.cpuMs, without.cpuMs);
      for (const [name, r] of [["with", withFile.result], ["without", without.result]] as const) {
        if (r.failed > 0) figures.note("send.rate", `${name}: ${r.failed} failed answers in run ${run}`);
      }
    }

    print(`\n--- end to end: ${messages} sends of each kind, 8 at a time, accepted to handed over`);
    const handoffs = async (kind: Kind): Promise<number[]> => {
      const ids: string[] = [];
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < messages) {
            next++;
            const answer = await fetch(`${api.httpUrl}/mail/v1/send`, { method: "POST", headers, body: BODIES[kind] });
            ids.push(((await answer.json()) as { id: string }).id);
          }
        }),
      );
      await settle();
      const { rows } = await db.query<{ ms: number }>(
        `select extract(epoch from (sent_at - created_at)) * 1000 as ms from message where id = any($1::uuid[]) and sent_at is not null`,
        [ids],
      );
      return rows.map((row) => Number(row.ms));
    };
    for (let run = 1; run <= runs; run++) {
      const without = await handoffs("without");
      const withFile = await handoffs("with");
      const baselineLabel = "the same send without a file";
      figures.add("e2e.p50", { label: "accepted to handed over, with a 1 MB file, p50", unit: "ms", better: "lower", baselineLabel }, percentile(withFile, 50), percentile(without, 50));
      figures.add("e2e.p99", { label: "accepted to handed over, with a 1 MB file, p99", unit: "ms", better: "lower", baselineLabel }, percentile(withFile, 99), percentile(without, 99));
      if (withFile.length < messages || without.length < messages) figures.note("e2e.p50", `run ${run}: ${withFile.length} / ${without.length} of ${messages} handed over`);
    }
    const { rows: stored } = await db.query<{ files: number; bytes: string }>(`select count(*)::int as files, coalesce(sum(size), 0)::text as bytes from message_attachment`);
    print(`\nstored: ${stored[0]?.files} files, ${(Number(stored[0]?.bytes ?? 0) / 1e6).toFixed(0)} MB in message_attachment`);
    print(`\n${formatTable(figures.reports())}`);
  } finally {
    for (const step of cleanup.reverse()) await step().catch((error: unknown) => console.error("cleanup:", error));
  }
}

function line({ result, cpuMs }: { result: LoadResult; cpuMs: number }): string {
  return `${result.perSecond.toFixed(0)}/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms, ${cpuMs.toFixed(2)} ms API CPU each${result.failed ? `, ${result.failed} failed` : ""}`;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
