/**
 * What the EXPLAIN benchmarks share (bench/explain-message-log.ts,
 * bench/contacts-reads.ts): the statements are never copied from the
 * source. The capability runs against a pool that writes down every
 * statement it sends; each scenario is timed over a few warm runs, then
 * each recorded statement is explained with its own bind values.
 */
import type { Pool } from "../../src/adapters/postgres/sql.ts";
import { median } from "./stats.ts";

export interface RecordedStatement {
  readonly text: string;
  readonly values: unknown[];
}

/**
 * The real pool, except that every `query` is also written down: both
 * forms, `query({ text, values })` and `query(text, values)`.
 */
export function recordingPool(pool: Pool, recorded: RecordedStatement[]): Pool {
  return new Proxy(pool, {
    get(target, property, receiver) {
      if (property === "query") {
        return (config: string | RecordedStatement, values?: unknown[]) => {
          const statement = typeof config === "string" ? { text: config, values: values ?? [] } : { text: config.text, values: config.values ?? [] };
          recorded.push(statement);
          return target.query(statement.text, statement.values);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/** Long id lists say nothing: print their size. */
export function brief(value: unknown): unknown {
  return Array.isArray(value) && value.length > 3 ? `[${value.length} values]` : value;
}

/** Plan lines repeating a long id list are cut, the rest is kept whole. */
export function clip(line: string, max = 220): string {
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

export function oneLine(sql: string): string {
  return sql.replace(/\s+/g, " ").trim();
}

export interface ExplainedStatement {
  readonly sql: string;
  readonly values: unknown[];
  readonly plan: string[];
  /** `Execution Time` of EXPLAIN ANALYZE, ms. */
  readonly executionMs: number;
  /** Buffers touched by the top node (shared hit + read): the work, independent of the cache's state. */
  readonly sharedBuffers: number;
  /** Plan lines that read a whole table of more than `seqScanRows` rows. */
  readonly warnings: string[];
}

export interface ScenarioResult {
  readonly title: string;
  /** What the scenario returned (items, events), for the reader to check it did what its title says. */
  readonly count: number;
  /** The capability's own wall time, median over the warm runs, ms. */
  readonly medianMs: number;
  readonly runsMs: number[];
  readonly statements: ExplainedStatement[];
}

export interface Scenario {
  readonly title: string;
  /** Runs the capability once; returns a count to print. */
  run(): Promise<number>;
}

export interface ExplainOptions {
  /** The unwrapped pool (EXPLAIN must not be recorded). */
  readonly pool: Pool;
  /** The array the recording pool writes to. */
  readonly recorded: RecordedStatement[];
  /** Warm runs per scenario (after one cold run that is not counted). */
  readonly runs?: number;
  /** A sequential scan reading more rows than this is flagged. */
  readonly seqScanRows?: number;
  /** Where the report goes; default stdout. */
  readonly print?: (line: string) => void;
}

const SEQ_SCAN = /Seq Scan on (\w+).*actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=(\d+)/;
const REMOVED = /Rows Removed by (?:Filter|Index Recheck): (\d+)/;
/** A plan node: its name (up to the estimates) and its actual rows and loops. */
const NODE = /^\s*(?:->\s*)?([A-Z][^(]*?)\s*\(cost=.*actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=(\d+)\)/;

/** Runs each scenario, prints its timing and the plans of its statements, returns it all. */
export async function explainScenarios(scenarios: readonly Scenario[], options: ExplainOptions): Promise<ScenarioResult[]> {
  const runs = options.runs ?? 5;
  const seqScanRows = options.seqScanRows ?? 10_000;
  const print = options.print ?? ((line: string) => console.log(line));
  const results: ScenarioResult[] = [];
  for (const scenario of scenarios) {
    // A cold run first, so the figures are warm-cache figures like a busy service's.
    await scenario.run();
    const runsMs: number[] = [];
    let count = 0;
    for (let n = 0; n < runs; n++) {
      options.recorded.length = 0;
      const started = performance.now();
      count = await scenario.run();
      runsMs.push(performance.now() - started);
    }
    const medianMs = median(runsMs);
    print(`=== ${scenario.title}: ${count} items, median ${medianMs.toFixed(2)} ms over ${runs} warm runs`);
    const statements: ExplainedStatement[] = [];
    for (const statement of [...options.recorded]) {
      const explained = await explainStatement(options.pool, statement, seqScanRows);
      statements.push(explained);
      print(`--- ${explained.sql}`);
      print(`    values: ${JSON.stringify(explained.values.map(brief))}`);
      for (const line of explained.plan) print(`    ${clip(line)}`);
      for (const warning of explained.warnings) print(`    !!! ${warning}`);
    }
    print("");
    results.push({ title: scenario.title, count, medianMs, runsMs, statements });
  }
  return results;
}

export async function explainStatement(pool: Pool, statement: RecordedStatement, seqScanRows: number): Promise<ExplainedStatement> {
  const { rows } = await pool.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${statement.text}`, statement.values);
  const plan = rows.map((row) => row["QUERY PLAN"]);
  const executionMs = Number(/Execution Time: ([\d.]+) ms/.exec(plan.join("\n"))?.[1] ?? Number.NaN);
  const top = plan.find((line) => line.trimStart().startsWith("Buffers:")) ?? "";
  const sharedBuffers = Number(/shared hit=(\d+)/.exec(top)?.[1] ?? 0) + Number(/read=(\d+)/.exec(top)?.[1] ?? 0);
  return { sql: oneLine(statement.text), values: statement.values, plan, executionMs, sharedBuffers, warnings: planWarnings(plan, seqScanRows) };
}

/**
 * What makes a plan bad at this size: a node that reads more than `limit`
 * rows to answer a page, either a sequential scan or a walk that throws
 * most of what it reads away (`Rows Removed by Filter`, times its loops).
 */
export function planWarnings(plan: readonly string[], limit: number): string[] {
  const warnings: string[] = [];
  let node = "";
  let loops = 1;
  for (const line of plan) {
    const header = NODE.exec(line);
    if (header) {
      node = (header[1] ?? "").trim();
      loops = Number(header[3] ?? 1);
      const seq = SEQ_SCAN.exec(line);
      if (seq && Number(seq[2]) * Number(seq[3]) > limit) warnings.push(`${node} returns ${Number(seq[2]) * Number(seq[3])} rows`);
      continue;
    }
    const removed = REMOVED.exec(line);
    if (removed && Number(removed[1]) * loops > limit) warnings.push(`${node} discards ${Number(removed[1]) * loops} rows by filter`);
  }
  return warnings;
}

/** The plan's lines that say how rows are found (scan nodes, index conditions, filters), for a summary. */
export function keyLines(plan: readonly string[]): string[] {
  return plan
    .filter((line) => /Scan|Index Cond|Recheck Cond|Filter:|Rows Removed|Sort Method|Join|Semi|Limit/.test(line))
    .map((line) => line.trim());
}
