/**
 * What the hot-path benches stand on: a throw-away database of the local
 * PostgreSQL, a seeded company (key, verified default sender, credits,
 * limits raised), and the service's processes started as children so each
 * one's CPU profile and RSS are its own.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { API_KEY_SCOPES } from "../../src/capabilities/accounts/scopes.ts";
import { OPERATOR_ACTOR } from "../../src/capabilities/audit/types.ts";
import { loadConfig } from "../../src/config.ts";
import { openServices } from "../../src/wiring/services.ts";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const adminUrl = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface ScratchDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

export async function scratchDatabase(): Promise<ScratchDatabase> {
  const name = `mail_hotpath_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const again = new pg.Client({ connectionString: adminUrl });
      await again.connect();
      await again.query(`drop database if exists ${name} with (force)`);
      await again.end();
    },
  };
}

/** The environment of the service's processes in every bench run. */
export function serviceEnv(databaseUrl: string, temporalAddress: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporalAddress,
    TEMPORAL_TASK_QUEUE: `hotpath-${randomBytes(3).toString("hex")}`,
    HTTP_PORT: "0",
    GRPC_PORT: "0",
    OPERATOR_PORT: "0",
    WORKER_OPERATOR_PORT: "0",
    RATE_LIMIT_PER_MINUTE: "10000000",
    SENDING_RATE_PER_SECOND: "100000",
    SENDING_BURST: "100000",
    LOG_LEVEL: "warn",
    ...extra,
  };
}

export interface Seeded {
  readonly secret: string;
  readonly companyId: string;
  readonly apiKeyPepper: string;
}

/** Migrates the database and seeds one company that may send `credits` messages. */
export async function seedSender(databaseUrl: string, credits: number): Promise<Seeded> {
  const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl });
  const services = await openServices(databaseUrl, config, { warn: (details, message) => console.warn(message, details) });
  try {
    const audit = { actor: OPERATOR_ACTOR, requestId: "bench", clientIp: "" };
    const company = await services.accounts.companies.create({ name: "Hot Path Co" });
    const scopes = ["mail.transactional.send", "mail.events.read"];
    const { secret } = await services.accounts.keys.create({ companyId: company.id, name: "bench", scopes, grantableScopes: API_KEY_SCOPES, audit });
    const domain = await services.sendingSetup.domains.create({ companyId: company.id, domain: "bench.example", audit });
    await services.sendingSetup.domains.overrideVerification({ companyId: company.id, domainId: domain.id, audit });
    await services.sendingSetup.senders.create({ companyId: company.id, email: "bench@bench.example", makeDefault: true, audit });
    await services.credits.adjust({ companyId: company.id, amount: credits, note: "bench" });
    return { secret, companyId: company.id, apiKeyPepper: config.apiKeyPepper };
  } finally {
    await services.close();
  }
}

export interface Child {
  readonly pid: number;
  readonly process: ChildProcess;
  /** Resolves the first capture group of the first output line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  /** SIGINT (a graceful exit, which writes the CPU profile), then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

export interface SpawnOptions {
  readonly env: NodeJS.ProcessEnv;
  /** Writes a V8 CPU profile into this directory on exit. */
  readonly cpuProfDir?: string;
  readonly cpuProfName?: string;
  readonly nodeArgs?: readonly string[];
  /** Prints the child's output prefixed with this label. */
  readonly label: string;
  readonly quiet?: boolean;
  /** Working directory; default: this checkout. */
  readonly cwd?: string;
}

export function spawnNode(script: string, args: readonly string[], options: SpawnOptions): Child {
  const nodeArgs = ["--disable-warning=ExperimentalWarning", ...(options.nodeArgs ?? [])];
  if (options.cpuProfDir) {
    nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`);
    if (options.cpuProfName) nodeArgs.push(`--cpu-prof-name=${options.cpuProfName}`);
  }
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { cwd: options.cwd ?? ROOT, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
  const waiters: { pattern: RegExp; resolve: (value: string) => void }[] = [];
  let buffered = "";
  const onData = (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    let newline: number;
    while ((newline = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!options.quiet) console.error(`[${options.label}] ${line}`);
      for (const waiter of [...waiters]) {
        const match = waiter.pattern.exec(line);
        if (match) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve(match[1] ?? match[0]);
        }
      }
    }
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    pid: child.pid ?? -1,
    process: child,
    waitFor(pattern, timeoutMs = 120_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${options.label}: no line matching ${pattern} in ${timeoutMs} ms`)), timeoutMs);
        const onExit = () => reject(new Error(`${options.label} exited before printing ${pattern}`));
        child.once("exit", onExit);
        waiters.push({
          pattern,
          resolve: (value) => {
            clearTimeout(timer);
            child.off("exit", onExit);
            resolve(value);
          },
        });
      });
    },
    async stop(graceMs = 20_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resident set size of a process in MB, from /proc (0 when it is gone). */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = /VmRSS:\s+(\d+) kB/.exec(status);
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the RSS of `pids` every 250 ms; `stop()` answers the peak of each. */
export function rssSampler(pids: Record<string, number>): { stop(): Record<string, number> } {
  const peaks: Record<string, number> = Object.fromEntries(Object.keys(pids).map((name) => [name, 0]));
  const sample = () => {
    for (const [name, pid] of Object.entries(pids)) peaks[name] = Math.max(peaks[name] ?? 0, rssMb(pid));
  };
  sample();
  const timer = setInterval(sample, 250);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peaks;
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A checkout to measure, with environment variables for its processes only. */
export interface Tree {
  readonly label: string;
  readonly root: string;
  readonly extra: Record<string, string>;
}

/**
 * The `--tree <label>=<dir>` and `--env <label>:<NAME>=<value>` options of
 * the comparison scripts; no `--tree`: this checkout, labelled `service`.
 */
export function treesFrom(treeSpecs: readonly string[] | undefined, envSpecs: readonly string[] | undefined): Tree[] {
  return (treeSpecs ?? [`service=${ROOT}`]).map((spec) => {
    const [label, dir] = spec.split("=");
    if (!label || !dir) throw new Error(`--tree wants <label>=<dir>, got ${spec}`);
    const extra: Record<string, string> = {};
    for (const setting of envSpecs ?? []) {
      const match = /^([^:]+):([A-Z_][A-Z0-9_]*)=(.*)$/.exec(setting);
      if (!match) throw new Error(`--env wants <label>:<NAME>=<value>, got ${setting}`);
      if (match[1] === label) extra[match[2] as string] = match[3] as string;
    }
    return { label, root: path.resolve(dir), extra };
  });
}
