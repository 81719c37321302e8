/**
 * `npm run bench:attachments`: POST /mail/v1/send with a 1 MB attachment
 * beside the same send without one, in the same run, on the same processes
 * (the API process and a worker, src/api-main.ts and bench/processes/worker.ts,
 * on a scratch database and a Temporal dev server, simulator provider).
 *
 * Each run sends BENCH_MESSAGES (default 200) of each kind, one kind after
 * the other, with autocannon at BENCH_CONNECTIONS (default 8), and waits
 * until every message was handed over before the next kind starts, so one
 * kind never pays for the other's workflow starts and handoffs. Per kind:
 * answers per second, p50, p99, the API process's CPU per accepted send
 * (its whole work for the message: the request, the workflow's start), and
 * from acceptance to handoff (created_at to sent_at, from the database:
 * the worker reads the file back and builds the MIME message with it).
 * BENCH_RUNS runs (default 3), after a warm-up of a tenth as many sends.
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
import autocannon from "autocannon";
import { cpuSnapshot, cpuSpent } from "./lib/processes.ts";
import { Figures, formatTable } from "./lib/report.ts";
import { setupCompany, startApi, startWorker } from "./lib/service.ts";
import { percentile } from "./lib/stats.ts";

const runs = Number(process.env.BENCH_RUNS ?? 3);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 8);
const messages = Number(process.env.BENCH_MESSAGES ?? 200);
const print = (line: string): void => console.log(line);

/** 1 MB (10^6 bytes) of incompressible bytes, as a PDF or a photo is. */
const FILE = randomBytes(1_000_000);
type Kind = "without" | "with";
/** A send of `kind`; the subject names the batch, to find its messages in the database. */
function bodyOf(kind: Kind, batch: string): string {
  const plain = { to: "ada@customer.example", subject: `Your receipt ${batch}`, html: "<p>Thanks for your order.</p>", text: "Thanks for your order." };
  if (kind === "without") return JSON.stringify(plain);
  return JSON.stringify({ ...plain, attachments: [{ filename: "receipt.pdf", contentType: "application/pdf", content: FILE.toString("base64") }] });
}

interface Batch {
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly failed: number;
  readonly cpuMs: number;
  /** Accepted to handed over, each message of the batch. */
  readonly handoffMs: number[];
}

async function main(): Promise<void> {
  print(
    `bench:attachments: ${os.cpus().length} CPUs, load ${os.loadavg()[0]?.toFixed(1)}, ${runs} run(s) of ${messages} sends of each kind, ${connections} connections; ` +
      `body with the file ${(bodyOf("with", "x").length / 1e6).toFixed(2)} MB, without ${bodyOf("without", "x").length} B`,
  );
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

    /** Until every accepted message was handed over: the next batch starts on a quiet service. */
    const settle = async (): Promise<void> => {
      for (let i = 0; i < 3000; i++) {
        const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from message where status in ('queued', 'deferred', 'processing')`);
        if ((rows[0]?.n ?? 0) === 0) return;
        await sleep(100);
      }
      print("  !!! messages still waiting for their handoff five minutes after the batch; going on");
    };

    const batch = async (kind: Kind, name: string, amount: number): Promise<Batch> => {
      const before = await cpuSnapshot();
      const result = await autocannon({ url: `${api.httpUrl}/mail/v1/send`, method: "POST", headers, body: bodyOf(kind, name), connections, amount });
      await settle();
      const spent = cpuSpent(before, await cpuSnapshot(), { api: api.child.pid });
      const ok = result["2xx"];
      const { rows } = await db.query<{ ms: number }>(
        `select extract(epoch from (sent_at - created_at)) * 1000 as ms from message where subject = $1 and sent_at is not null`,
        [`Your receipt ${name}`],
      );
      return {
        perSecond: ok / (result.duration || 1),
        p50Ms: result.latency.p50,
        p99Ms: result.latency.p99,
        failed: result.non2xx + result.errors + result.timeouts,
        cpuMs: ok > 0 ? ((spent.get("api") ?? 0) * 1000) / ok : 0,
        handoffMs: rows.map((row) => Number(row.ms)),
      };
    };

    const figures = new Figures();
    const baselineLabel = "the same send without a file";
    const add = (id: string, label: string, unit: string, better: "higher" | "lower", withFile: number, without: number) =>
      figures.add(id, { label: `${label}`, unit, better, baselineLabel }, withFile, without);
    print("\n--- warm-up");
    await batch("without", "warm-up without", Math.max(connections, Math.round(messages / 10)));
    await batch("with", "warm-up with", Math.max(connections, Math.round(messages / 10)));
    for (let run = 1; run <= runs; run++) {
      const without = await batch("without", `run ${run} without`, messages);
      const withFile = await batch("with", `run ${run} with`, messages);
      print(`  run ${run}: without ${line(without)}; with 1 MB ${line(withFile)}`);
      add("send.rate", "POST /mail/v1/send with a 1 MB file, answered", "req/s", "higher", withFile.perSecond, without.perSecond);
      add("send.p50", "POST /mail/v1/send with a 1 MB file, p50", "ms", "lower", withFile.p50Ms, without.p50Ms);
      add("send.p99", "POST /mail/v1/send with a 1 MB file, p99", "ms", "lower", withFile.p99Ms, without.p99Ms);
      add("send.cpu", "API CPU per accepted send with a 1 MB file", "ms", "lower", withFile.cpuMs, without.cpuMs);
      add("e2e.p50", "accepted to handed over, with a 1 MB file, p50", "ms", "lower", percentile(withFile.handoffMs, 50), percentile(without.handoffMs, 50));
      add("e2e.p99", "accepted to handed over, with a 1 MB file, p99", "ms", "lower", percentile(withFile.handoffMs, 99), percentile(without.handoffMs, 99));
      for (const [name, b] of [["with", withFile], ["without", without]] as const) {
        if (b.failed > 0) figures.note("send.rate", `${name}: ${b.failed} failed answers in run ${run}`);
        if (b.handoffMs.length < messages) figures.note("e2e.p50", `${name}, run ${run}: ${b.handoffMs.length} of ${messages} handed over`);
      }
    }
    const { rows: stored } = await db.query<{ files: number; bytes: string }>(`select count(*)::int as files, coalesce(sum(size), 0)::text as bytes from message_attachment`);
    print(`\nstored: ${stored[0]?.files} files, ${(Number(stored[0]?.bytes ?? 0) / 1e6).toFixed(0)} MB in message_attachment`);
    print(`\n${formatTable(figures.reports())}`);
  } finally {
    for (const step of cleanup.reverse()) await step().catch((error: unknown) => console.error("cleanup:", error));
  }
}

function line(b: Batch): string {
  return `${b.perSecond.toFixed(0)}/s, p50 ${b.p50Ms.toFixed(1)} ms, p99 ${b.p99Ms.toFixed(1)} ms, ${b.cpuMs.toFixed(2)} ms API CPU each, handed over in ${percentile(b.handoffMs, 50).toFixed(0)} ms (p50)${b.failed ? `, ${b.failed} failed` : ""}`;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
