/**
 * The statement census: which SQL statements each hot request runs, for the
 * service and for the bare baseline, and what one message costs the worker
 * after its 202, counted at the PostgreSQL wire by a proxy
 * (bench/lib/pg-census-proxy.ts) in front of each process. It checks that
 * the bare baseline still runs what the service runs (the hot path is being
 * changed; the baseline is written by hand) and gives the statements per
 * handoff. The processes are stopped afterwards: the measured runs go to
 * PostgreSQL directly.
 *
 * Requests are sent one at a time; a statement belongs to a request when it
 * reached the proxy between the request and its answer. Background work
 * (relays, pollers, the key-usage flush) is recorded while idle: those
 * statements, and the worker's transactions made only of them, are left
 * out. Per-request counts are medians.
 */
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { findFreePort } from "../../src/runtime/ports.ts";
import { type CensusProxy, type CensusStatement, isTransactionControl, startCensusProxy, transactions } from "../lib/pg-census-proxy.ts";
import { type Child, startChild } from "../lib/processes.ts";
import { API_KEY_PEPPER, type BenchCompany, setupCompany, startApi, startWorker, type WebhookReceiverAccess } from "../lib/service.ts";
import type { BenchSettings } from "../lib/settings.ts";
import { median } from "../lib/stats.ts";
import { kindOf, STATEMENT_KINDS, type StatementKind } from "../baselines/bare-statements.ts";
import { SEND_BODY } from "./api-load.ts";

const BARE_SEND = path.join(import.meta.dirname, "..", "baselines", "bare-send.ts");
const IDLE_MS = 3000;
/** After each of the service's sends: its workflow start and what follows it land here, not in the next request. */
const SEND_GAP_MS = 500;
const DELIVERY_TIMEOUT_MS = 120_000;

export interface RequestCensus {
  readonly route: string;
  /** Median statements per request (transaction control included). */
  readonly service: number;
  /** The bare baseline with every statement kind on (it then runs the service's kinds only). */
  readonly bare: number;
  /** The kinds of the service's statements (bench/baselines/bare-statements.ts); null: a statement no kind recognises. */
  readonly serviceKinds: (StatementKind | null)[];
  /** The statements of one request with the median count, in order, shortened. */
  readonly serviceStatements: string[];
  readonly bareStatements: string[];
}

export interface CensusReport {
  readonly requests: RequestCensus[];
  /** What the bare baseline runs in the measured runs: the kinds the service's requests run. */
  readonly bareKinds: StatementKind[];
  /**
   * Per accepted message: the API's statements after its 202 (median), the
   * worker's statements and transactions from handoff to delivered (a
   * statement outside a transaction counts as one).
   */
  readonly perMessage: {
    readonly apiAfterAnswer: number;
    readonly apiAfterAnswerStatements: string[];
    readonly workerStatements: number;
    readonly workerTransactions: number;
    /** Each distinct statement of the worker, how many times per message, in the order first seen. */
    readonly workerStatementTexts: { readonly perMessage: number; readonly text: string }[];
  };
  readonly warnings: string[];
}

export interface CensusContext {
  readonly settings: BenchSettings;
  readonly databaseUrl: string;
  readonly temporalAddress: string;
  readonly taskQueue: string;
  readonly receiver: WebhookReceiverAccess;
  readonly print: (line: string) => void;
}

function short(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return one.length > 110 ? `${one.slice(0, 110)}…` : one;
}

function between(statements: readonly CensusStatement[], from: number, to: number): CensusStatement[] {
  return statements.filter((statement) => statement.at >= from && statement.at <= to);
}

interface RequestCount {
  readonly count: number;
  readonly statements: string[];
  readonly kinds: (StatementKind | null)[];
  /** Median statements in the `gapMs` after each answer (work done after answering). */
  readonly after: number;
  readonly afterStatements: string[];
}

/**
 * N requests one at a time, `gapMs` apart; the median statement count and
 * the statements of a request with that count, during the request and in
 * the gap after its answer.
 */
async function censusOf(proxy: CensusProxy, requests: number, request: () => Promise<void>, background: ReadonlySet<string>, gapMs = 0): Promise<RequestCount> {
  const during: CensusStatement[][] = [];
  const after: CensusStatement[][] = [];
  const own = (statements: CensusStatement[]) => statements.filter((statement) => !background.has(statement.text));
  for (let i = 0; i < requests; i++) {
    const from = performance.now();
    await request();
    const answered = performance.now();
    during.push(own(between(proxy.statements, from, answered)));
    if (gapMs > 0) {
      await sleep(gapMs);
      after.push(own(between(proxy.statements, answered, performance.now())));
    }
  }
  const typical = (windows: CensusStatement[][]) => {
    const count = windows.length === 0 ? 0 : median(windows.map((window) => window.length));
    const example = windows.find((window) => window.length === count) ?? [];
    return { count, statements: example.map((statement) => short(statement.text)), kinds: example.map((statement) => kindOf(statement.text) ?? null) };
  };
  const before = typical(during);
  const later = typical(after);
  return { count: before.count, statements: before.statements, kinds: before.kinds, after: later.count, afterStatements: later.statements };
}

async function answered(response: Response, expected: number): Promise<string> {
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${response.url} answered ${response.status}, expected ${expected}: ${text.slice(0, 300)}`);
  return text;
}

export async function runCensus(ctx: CensusContext): Promise<{ report: CensusReport; company: BenchCompany }> {
  const { settings, print } = ctx;
  const proxies = {
    api: await startCensusProxy(ctx.databaseUrl),
    worker: await startCensusProxy(ctx.databaseUrl),
    bare: await startCensusProxy(ctx.databaseUrl),
  };
  const children: Child[] = [];
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  try {
    const api = await startApi({ databaseUrl: proxies.api.url, temporalAddress: ctx.temporalAddress, taskQueue: ctx.taskQueue, verbose: settings.verbose }, "api (census)");
    children.push(api.child);
    const company = await setupCompany(api.operatorUrl, 10_000_000);
    children.push(
      await startWorker({ databaseUrl: proxies.worker.url, temporalAddress: ctx.temporalAddress, taskQueue: ctx.taskQueue, verbose: settings.verbose }, ctx.receiver, "worker (census)"),
    );
    const barePort = await findFreePort();
    const bareUrl = `http://127.0.0.1:${barePort}`;
    children.push(
      await startChild({
        name: "bare baseline (census)",
        script: BARE_SEND,
        env: { ...process.env, DATABASE_URL: proxies.bare.url, API_KEY_PEPPER, PORT: String(barePort) },
        readyCheck: async () => (await fetch(`${bareUrl}/livez`)).ok,
        verbose: settings.verbose,
      }),
    );
    await db.connect();

    const headers = { authorization: `Bearer ${company.secret}`, "content-type": "application/json" };
    const body = JSON.stringify(SEND_BODY);
    const ids: string[] = [];
    const send = (baseUrl: string) => async () => {
      const text = await answered(await fetch(`${baseUrl}/mail/v1/send`, { method: "POST", headers, body }), 202);
      if (baseUrl !== bareUrl) ids.push((JSON.parse(text) as { id: string }).id);
    };
    // First calls prepare statements and load metadata: not what a request costs.
    await send(api.httpUrl)();
    await send(bareUrl)();
    const warmupId = ids.pop() as string;
    await sleep(1000);

    // Background rates, while nothing is asked of the service.
    const idleFrom = performance.now();
    await sleep(IDLE_MS);
    const idleTo = performance.now();
    // What each process runs with nothing asked of it: relays, pollers, flushes.
    const idleTexts = (proxy: CensusProxy) =>
      new Set(between(proxy.statements, idleFrom, idleTo).filter((statement) => !isTransactionControl(statement.text)).map((statement) => statement.text));
    const background = { api: idleTexts(proxies.api), worker: idleTexts(proxies.worker), bare: idleTexts(proxies.bare) };

    const n = settings.censusRequests;
    const requests: RequestCensus[] = [];
    const sendsFrom = performance.now();
    const serviceSend = await censusOf(proxies.api, n, send(api.httpUrl), background.api, SEND_GAP_MS);
    // The handoffs of those sends: until every one is delivered.
    const deadline = performance.now() + DELIVERY_TIMEOUT_MS;
    for (;;) {
      const { rows } = await db.query<{ n: number }>(`select count(*)::int as n from message where id = any($1::uuid[]) and status = 'delivered'`, [ids]);
      if ((rows[0]?.n ?? 0) >= ids.length) break;
      if (performance.now() > deadline) throw new Error(`census: ${ids.length} messages not delivered after ${DELIVERY_TIMEOUT_MS / 1000} s`);
      await sleep(50);
    }
    // Provider events (delivery) arrive a little after the handoff: let the last ones settle.
    await sleep(500);
    const sendsTo = performance.now();
    // The worker's transactions in that time, those of its background left out.
    const handoffs = transactions(between(proxies.worker.statements, sendsFrom, sendsTo)).filter((transaction) =>
      transaction.some((statement) => !isTransactionControl(statement.text) && !background.worker.has(statement.text)),
    );
    const work = handoffs.flat().filter((statement) => !isTransactionControl(statement.text));
    const byText = new Map<string, number>();
    for (const statement of work) byText.set(short(statement.text), (byText.get(short(statement.text)) ?? 0) + 1);
    const perMessage = {
      apiAfterAnswer: serviceSend.after,
      apiAfterAnswerStatements: serviceSend.afterStatements,
      workerStatements: work.length / ids.length,
      workerTransactions: handoffs.length / ids.length,
      workerStatementTexts: [...byText].map(([text, count]) => ({ perMessage: count / ids.length, text })),
    };

    const bareSend = await censusOf(proxies.bare, n, send(bareUrl), background.bare);
    requests.push({
      route: "POST /mail/v1/send (before the 202)",
      service: serviceSend.count,
      bare: bareSend.count,
      serviceKinds: serviceSend.kinds,
      serviceStatements: serviceSend.statements,
      bareStatements: bareSend.statements,
    });
    const get = (baseUrl: string, route: string) => async () => void (await answered(await fetch(`${baseUrl}${route}`, { headers }), 200));
    for (const [label, route] of [
      ["GET /mail/v1/messages/{id}", `/mail/v1/messages/${warmupId}`],
      ["GET /mail/v1/messages (a page)", "/mail/v1/messages?limit=25"],
    ] as const) {
      await get(api.httpUrl, route)();
      await get(bareUrl, route)();
      const service = await censusOf(proxies.api, n, get(api.httpUrl, route), background.api);
      const bare = await censusOf(proxies.bare, n, get(bareUrl, route), background.bare);
      requests.push({
        route: label,
        service: service.count,
        bare: bare.count,
        serviceKinds: service.kinds,
        serviceStatements: service.statements,
        bareStatements: bare.statements,
      });
    }

    const warnings = requests.flatMap((request) =>
      request.serviceKinds.flatMap((kind, i) =>
        kind === null
          ? [`${request.route}: the service runs a statement the bare baseline has no counterpart for: ${request.serviceStatements[i]} (add its kind to bench/baselines/bare-statements.ts)`]
          : [],
      ),
    );
    const used = new Set(requests.flatMap((request) => request.serviceKinds));
    const bareKinds = STATEMENT_KINDS.filter((kind) => used.has(kind));
    const report: CensusReport = { requests, bareKinds, perMessage, warnings };
    printCensus(report, print);
    return { report, company };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await db.end().catch(() => undefined);
    for (const proxy of Object.values(proxies)) await proxy.close();
  }
}

function printCensus(report: CensusReport, print: (line: string) => void): void {
  print("statement census (counted at the PostgreSQL wire; median of the requests):");
  for (const request of report.requests) {
    const kinds = request.serviceKinds.map((kind) => kind ?? "UNKNOWN").join(", ");
    print(`  ${request.route}: service ${request.service} (${kinds}); bare baseline with every statement ${request.bare}`);
    request.serviceStatements.forEach((text, i) => print(`    service ${i + 1}. ${text}`));
    request.bareStatements.forEach((text, i) => print(`    bare    ${i + 1}. ${text}`));
  }
  const { perMessage } = report;
  print(`  per message after its 202, API process: ${perMessage.apiAfterAnswer} statements (median, within ${SEND_GAP_MS} ms of the answer)`);
  perMessage.apiAfterAnswerStatements.forEach((text, i) => print(`    service ${i + 1}. ${text}`));
  print(
    `  per message after its 202, worker process (handoff to delivered, its background left out): ` +
      `${perMessage.workerStatements.toFixed(1)} statements in ${perMessage.workerTransactions.toFixed(1)} transactions ` +
      `(BEGIN/COMMIT not counted as statements; a statement outside a transaction is one)`,
  );
  for (const { perMessage: times, text } of perMessage.workerStatementTexts) print(`    worker  ${times.toFixed(1)}x ${text}`);
  print(`  the bare baseline runs, in the measured runs, the kinds the service runs: ${report.bareKinds.join(", ")}`);
  for (const warning of report.warnings) print(`  !!! ${warning}`);
  print("");
}
