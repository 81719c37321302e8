/**
 * `npm run bench`: the service against same-run baselines, on this machine.
 *
 * Starts everything it needs: two scratch databases on the local PostgreSQL
 * (or the server of BENCH_DATABASE_ADMIN_URL / DATABASE_URL; dropped
 * after), a Temporal dev server (or TEMPORAL_ADDRESS), the API process
 * (src/api-main.ts) and a worker process, each a child process of its own,
 * the baselines (each a child process too) and a local HTTPS webhook
 * receiver. Simulator provider; the rate limit and the sending pace are
 * raised so that they do not cap the figures. Phases, in order:
 *
 * 1. census: the SQL statements of each hot request, service and bare
 *    baseline side by side, and the statements per handoff (phases/census.ts);
 * 2. send, grpc, reads: the API process under load against a bare Fastify
 *    + pg server running the same statements (phases/api-load.ts);
 * 3. e2e, webhooks: 202 to sent / delivered against an empty workflow, and
 *    webhook deliveries against a bare posting loop (phases/flow.ts);
 * then the peak RSS of each process, one table, and the JSON
 * (bench/results/latest.json, not committed: figures depend on the machine;
 * docs/benchmarks.md keeps the ones worth keeping).
 *
 * Every figure is measured BENCH_RUNS times (default 3), service and
 * baseline alternately, and printed as median [min-max]; the ratio is
 * service / baseline per run. About 5-6 minutes by default; BENCH_QUICK=1
 * is a smoke run (one run of one second each). See bench/lib/settings.ts
 * for every setting (BENCH_ONLY=send,reads,... runs some phases only).
 */
import { writeFile, mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { randomBytes } from "node:crypto";
import { startTemporalDevServer, type TemporalDevServer } from "../src/runtime/temporal-dev-server.ts";
import { WEBHOOK_HEADERS } from "../src/capabilities/webhooks/brand.ts";
import { makeTestCertificate, startHttpsReceiver } from "../test/adapters/http/https-receiver.ts";
import { createScratchDatabase, ADMIN_URL, type ScratchDatabase } from "./lib/database.ts";
import { Figures, formatTable } from "./lib/report.ts";
import { benchSettings, type Phase } from "./lib/settings.ts";
import type { BenchCompany } from "./lib/service.ts";
import { measureApiLoad, type ApiLoadPeaks } from "./phases/api-load.ts";
import { runCensus, type CensusReport } from "./phases/census.ts";
import { measureFlow, type FlowPeaks, type ReceiverSetup } from "./phases/flow.ts";

const RESULTS = path.join(import.meta.dirname, "results", "latest.json");
/** The host name of the webhook endpoint; only the benchmark's resolver knows it (127.0.0.1). */
const HOOK_HOST = "hooks.bench.example";
const API_RSS_TARGET_MB = 250;
const WORKER_RSS_TARGET_MB = 400;

export interface RunBenchOptions {
  /** Default phases when BENCH_ONLY is unset (the bench:send / bench:webhooks entries). */
  readonly phases?: readonly Phase[];
}

export async function runBench(options: RunBenchOptions = {}): Promise<void> {
  const settings = benchSettings(process.env, options.phases ? { phases: options.phases } : {});
  const print = (line: string): void => console.log(line);
  const started = performance.now();
  const loadBefore = os.loadavg();
  print(
    `npm run bench: ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? "?"}), load ${loadBefore.map((l) => l.toFixed(1)).join(" ")}, Node ${process.version}; ` +
      `${settings.runs} run(s) per figure, ${settings.connections} connections, phases ${[...settings.phases].join(", ")}${settings.quick ? " (quick)" : ""}`,
  );
  if (loadBefore[0] !== undefined && loadBefore[0] > os.cpus().length) {
    print(`!!! the machine is busy (load ${loadBefore[0].toFixed(1)} on ${os.cpus().length} CPUs): figures will be noisy; ratios hold up better than absolute figures`);
  }

  const phase = (name: string): void => print(`\n--- ${name} (+${((performance.now() - started) / 1000).toFixed(0)} s)`);
  const figures = new Figures();
  const cleanup: (() => Promise<unknown>)[] = [];
  const runCleanup = async (): Promise<void> => {
    for (const step of cleanup.reverse()) await step().catch((error: unknown) => console.error("cleanup:", error));
    cleanup.length = 0;
  };
  const interrupted = (): void => {
    print("\ninterrupted: cleaning up");
    void runCleanup().finally(() => process.exit(130));
  };
  process.once("SIGINT", interrupted);

  // A phase that fails is reported and the others still run: the table shows what was measured.
  const failures: string[] = [];
  const guarded = async (name: string, run: () => Promise<void>): Promise<void> => {
    try {
      await run();
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      print(`!!! ${name} failed (the other phases still run): ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  let census: CensusReport | undefined;
  let loadPeaks: ApiLoadPeaks | undefined;
  let flowPeaks: FlowPeaks | undefined;
  try {
    const adminUrl = settings.adminUrl ?? ADMIN_URL;
    const scratch = async (prefix: string): Promise<ScratchDatabase> => {
      const database = await createScratchDatabase(prefix, adminUrl);
      cleanup.push(() => database.drop());
      return database;
    };
    let temporalAddress = settings.temporalAddress;
    if (!temporalAddress) {
      const server: TemporalDevServer = await startTemporalDevServer();
      cleanup.push(() => server.stop());
      temporalAddress = server.address;
    }
    const suffix = randomBytes(3).toString("hex");

    const certificate = await makeTestCertificate([HOOK_HOST]);
    const caFile = path.join(os.tmpdir(), `mail-bench-receiver-${suffix}.pem`);
    await writeFile(caFile, certificate.cert);
    cleanup.push(() => rm(caFile, { force: true }));
    const receiver = await startHttpsReceiver(certificate);
    cleanup.push(() => receiver.close());
    const firstSeen = new Map<string, number>();
    receiver.handle((request, response) => {
      const id = String(request.headers[WEBHOOK_HEADERS.delivery.toLowerCase()]);
      if (!firstSeen.has(id)) firstSeen.set(id, Date.now());
      response.writeHead(200).end();
    });
    // The receiver keeps every request for tests; a benchmark only needs firstSeen.
    const forget = setInterval(() => receiver.received.splice(0), 1000);
    cleanup.push(async () => clearInterval(forget));
    const receiverSetup: ReceiverSetup = { receiver, host: HOOK_HOST, caFile, firstSeen };

    const flowQueue = `bench-${suffix}`;
    const needsFlow = settings.phases.has("e2e") || settings.phases.has("webhooks");
    const flowDb = settings.phases.has("census") || needsFlow ? await scratch("mail_bench_flow") : undefined;
    let company: BenchCompany | undefined;
    if (settings.phases.has("census") && flowDb) {
      phase("statement census");
      await guarded("census", async () => {
        const result = await runCensus({ settings, databaseUrl: flowDb.url, temporalAddress, taskQueue: flowQueue, receiver: receiverSetup, print });
        census = result.report;
        company = result.company;
      });
    }
    if (settings.phases.has("send") || settings.phases.has("grpc") || settings.phases.has("reads")) {
      phase("API process under load");
      const loadDb = await scratch("mail_bench_load");
      await guarded("API load", async () => {
        const bareKinds = census?.bareKinds ?? (process.env.BENCH_BARE_STATEMENTS ? process.env.BENCH_BARE_STATEMENTS.split(",") : undefined);
        print(`the bare baseline runs: ${bareKinds?.join(", ") ?? "every statement kind (no census)"}`);
        loadPeaks = await measureApiLoad({
          settings,
          bareKinds,
          databaseUrl: loadDb.url,
          temporalAddress,
          taskQueue: `bench-parked-${suffix}`,
          figures,
          print,
        });
      });
    }
    if (needsFlow && flowDb) {
      phase("after the 202: end to end and webhooks");
      await guarded("end to end and webhooks", async () => {
        flowPeaks = await measureFlow({
          settings,
          databaseUrl: flowDb.url,
          temporalAddress,
          taskQueue: flowQueue,
          receiver: receiverSetup,
          figures,
          print,
          ...(company ? { company } : {}),
        });
      });
    }
  } finally {
    await runCleanup();
    process.removeListener("SIGINT", interrupted);
  }

  const apiPeaks = [loadPeaks?.apiPeakMb, flowPeaks?.apiPeakMb].filter((value): value is number => value !== undefined && Number.isFinite(value));
  if (apiPeaks.length > 0) {
    figures.add(
      "rss.api",
      { label: "API process peak RSS", unit: "MiB", better: "lower", baselineLabel: "the bare baseline process (peak RSS)", target: { atMost: API_RSS_TARGET_MB } },
      Math.max(...apiPeaks),
      loadPeaks?.barePeakMb ?? Number.NaN,
    );
    figures.note("rss.api", `one value per process over the whole run: under send/read load ${loadPeaks?.apiPeakMb.toFixed(0) ?? "n/a"} MiB, under end-to-end/webhook load ${flowPeaks?.apiPeakMb.toFixed(0) ?? "n/a"} MiB`);
  }
  if (flowPeaks && Number.isFinite(flowPeaks.workerPeakMb)) {
    figures.add(
      "rss.worker",
      { label: "worker process peak RSS", unit: "MiB", better: "lower", baselineLabel: "the empty-workflow worker process (peak RSS)", target: { atMost: WORKER_RSS_TARGET_MB } },
      flowPeaks.workerPeakMb,
      flowPeaks.emptyPeakMb,
    );
  }

  const reports = figures.reports();
  const seconds = (performance.now() - started) / 1000;
  print("");
  print(formatTable(reports));
  print("");
  for (const warning of census?.warnings ?? []) print(`!!! census: ${warning}`);
  print(`service = the API / worker processes; ratio = service / baseline per run (rates: higher is better; times and memory: lower is better).`);
  print(`total ${seconds.toFixed(0)} s; load average now ${os.loadavg().map((l) => l.toFixed(1)).join(" ")}`);

  const output = settings.output ?? RESULTS;
  await mkdir(path.dirname(output), { recursive: true });
  await writeFile(
    output,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        seconds,
        machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, loadBefore, loadAfter: os.loadavg(), node: process.version },
        settings: { ...settings, phases: [...settings.phases], adminUrl: undefined },
        census,
        failures,
        rss: { apiLoad: loadPeaks?.apiPeakMb, apiFlow: flowPeaks?.apiPeakMb, worker: flowPeaks?.workerPeakMb, bare: loadPeaks?.barePeakMb, emptyWorkflow: flowPeaks?.emptyPeakMb },
        figures: reports,
      },
      null,
      2,
    )}\n`,
  );
  print(`written: ${path.relative(process.cwd(), output)}`);
  if (failures.length > 0) {
    for (const failure of failures) console.error(`\nfailed: ${failure}`);
    throw new Error(`${failures.length} phase(s) failed; the figures above are incomplete`);
  }
}

if (import.meta.main) {
  // Exit explicitly: load generators may keep idle connections (HTTP/2 sessions) open.
  runBench().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
