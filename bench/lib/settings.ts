/**
 * Settings of `npm run bench`, from the environment. BENCH_QUICK=1 turns
 * every default into a smoke run's (one run, one-second loads, small
 * batches); a variable that is set wins over both.
 */

export const PHASES = ["census", "send", "grpc", "reads", "e2e", "webhooks"] as const;
export type Phase = (typeof PHASES)[number];

export interface BenchSettings {
  readonly quick: boolean;
  /** Measured runs of each figure (BENCH_RUNS). */
  readonly runs: number;
  /** Seconds of each send load run (BENCH_DURATION). */
  readonly sendSeconds: number;
  /** Seconds of each read load run (BENCH_READ_DURATION). */
  readonly readSeconds: number;
  /** Seconds of load before the measured runs of each route, not counted (BENCH_WARMUP). */
  readonly warmupSeconds: number;
  /** Connections (autocannon) and callers in flight (gRPC) (BENCH_CONNECTIONS). */
  readonly connections: number;
  /** Messages per end-to-end batch (BENCH_MESSAGES). */
  readonly messages: number;
  /** Events per webhook throughput batch (BENCH_EVENTS). */
  readonly events: number;
  /** Events published one by one for the delay (BENCH_LATENCY_EVENTS), PAUSE_MS apart. */
  readonly latencyEvents: number;
  readonly pauseMs: number;
  /** Sequential requests per kind in the statement census (BENCH_CENSUS_REQUESTS). */
  readonly censusRequests: number;
  /** What runs (BENCH_ONLY=send,reads...; default all). */
  readonly phases: ReadonlySet<Phase>;
  /** An external Temporal frontend (TEMPORAL_ADDRESS); unset: a dev server for the run. */
  readonly temporalAddress: string | undefined;
  /** The PostgreSQL server the scratch databases are made on (BENCH_DATABASE_ADMIN_URL, else DATABASE_URL, else local). */
  readonly adminUrl: string | undefined;
  /** Echo the children's output (BENCH_VERBOSE=1). */
  readonly verbose: boolean;
  /** Where the JSON goes (BENCH_OUTPUT; default bench/results/latest.json). */
  readonly output: string | undefined;
}

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, integer = true): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? "integer" : "number"}, got "${raw}"`);
  }
  return value;
}

function phases(raw: string | undefined): ReadonlySet<Phase> {
  if (raw === undefined || raw.trim() === "") return new Set(PHASES);
  const chosen = raw.split(",").map((name) => name.trim()).filter((name) => name !== "");
  const unknown = chosen.filter((name) => !(PHASES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`BENCH_ONLY: unknown ${unknown.join(", ")} (phases: ${PHASES.join(", ")})`);
  return new Set(chosen as Phase[]);
}

export function benchSettings(env: NodeJS.ProcessEnv = process.env, defaults: { phases?: readonly Phase[] } = {}): BenchSettings {
  const quick = env.BENCH_QUICK === "1" || env.BENCH_QUICK === "true";
  return {
    quick,
    runs: number(env, "BENCH_RUNS", quick ? 1 : 3),
    sendSeconds: number(env, "BENCH_DURATION", quick ? 1 : 10, false),
    readSeconds: number(env, "BENCH_READ_DURATION", quick ? 1 : 4, false),
    warmupSeconds: number(env, "BENCH_WARMUP", quick ? 0.5 : 2, false),
    connections: number(env, "BENCH_CONNECTIONS", 32),
    messages: number(env, "BENCH_MESSAGES", quick ? 20 : 300),
    events: number(env, "BENCH_EVENTS", quick ? 20 : 300),
    latencyEvents: number(env, "BENCH_LATENCY_EVENTS", quick ? 3 : 20),
    pauseMs: number(env, "PAUSE_MS", 100),
    censusRequests: number(env, "BENCH_CENSUS_REQUESTS", quick ? 3 : 10),
    phases: phases(env.BENCH_ONLY ?? defaults.phases?.join(",")),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    adminUrl: env.BENCH_DATABASE_ADMIN_URL || env.DATABASE_URL || undefined,
    verbose: env.BENCH_VERBOSE === "1",
    output: env.BENCH_OUTPUT || undefined,
  };
}
