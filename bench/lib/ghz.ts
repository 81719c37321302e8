/**
 * gRPC load with ghz (https://ghz.sh), a Go process of its own: the
 * benchmark's gRPC figures are the service's, not those of a Node client
 * running in the benchmark's own process and event loop (a Node loop on the
 * same cores measured gRPC at about a third of what ghz measures).
 *
 * When it is missing, the benchmark installs it from the Go module proxy,
 * as .ci/run builds the Temporal CLI (`go install`, pinned; lands in
 * ~/go/bin, found there too). GHZ_PATH names another binary.
 *
 * The schema comes from the descriptor set the build keeps current
 * (src/gen/mail.binpb, `npm run generate`), not from server reflection, so a
 * run does not depend on the reflection service and does no extra call.
 */
import { spawn } from "node:child_process";
import { access, constants } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import type { LoadResult } from "./load.ts";

export const PROTOSET = path.resolve(import.meta.dirname, "..", "..", "src", "gen", "mail.binpb");
export const GHZ_MODULE = "github.com/bojand/ghz/cmd/ghz@v0.121.0";
export const GHZ_INSTALL = `go install ${GHZ_MODULE}`;

/** The ghz binary: $GHZ_PATH, then `ghz` on PATH, then ~/go/bin/ghz; undefined when there is none. */
export async function findGhz(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const candidates = env.GHZ_PATH ? [env.GHZ_PATH] : [];
  for (const dir of (env.PATH ?? "").split(path.delimiter)) if (dir) candidates.push(path.join(dir, "ghz"));
  candidates.push(path.join(env.HOME ?? homedir(), "go", "bin", "ghz"));
  for (const candidate of candidates) {
    if (
      await access(candidate, constants.X_OK).then(
        () => true,
        () => false,
      )
    ) {
      return candidate;
    }
  }
  return undefined;
}

/**
 * The ghz binary, installed into ~/go/bin with the Go toolchain (PATH or
 * /usr/local/go/bin) when none is found. Throws, naming the command, when
 * it cannot be installed: a gRPC figure measured without it would not be the service's.
 */
export async function requireGhz(log: (line: string) => void, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const found = await findGhz(env);
  if (found) return found;
  const home = env.HOME ?? homedir();
  const go = await findExecutable("go", [...(env.PATH ?? "").split(path.delimiter), "/usr/local/go/bin"]);
  if (!go) throw new Error(`ghz is missing and no Go toolchain is there to build it: ${GHZ_INSTALL}`);
  log(`ghz not found: installing ${GHZ_MODULE} with ${go} (a few minutes the first time)`);
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(go, ["install", GHZ_MODULE], { env: { ...env, GOBIN: path.join(home, "go", "bin") }, stdio: ["ignore", "inherit", "inherit"] });
    child.once("error", reject);
    child.once("exit", resolve);
  });
  const installed = code === 0 ? await findGhz(env) : undefined;
  if (!installed) throw new Error(`could not install ghz (exit ${code}): ${GHZ_INSTALL}`);
  return installed;
}

async function findExecutable(name: string, dirs: readonly string[]): Promise<string | undefined> {
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return undefined;
}

export interface GhzLoad {
  readonly ghz: string;
  /** `host:port` of the h2c listener (plaintext gRPC). */
  readonly target: string;
  /** `package.Service/Method`. */
  readonly call: string;
  /** The request in proto3 JSON (ghz templating such as `{{newUUID}}` allowed in strings). */
  readonly data: unknown;
  /** Request metadata (lower-case names); ghz templating allowed in values. */
  readonly metadata: Readonly<Record<string, string>>;
  /** Calls in flight. */
  readonly concurrency: number;
  /** HTTP/2 connections the calls are spread over (gRPC clients multiplex on one by default). */
  readonly connections: number;
  readonly seconds: number;
  /**
   * Called once, just before `seconds` have passed since ghz started, while
   * it is still running: where the caller reads what the run cost the
   * machine, ghz's own CPU included (its pid is gone once it has exited).
   */
  readonly atDeadline?: (pid: number) => Promise<void>;
}

/** What `ghz --format json` writes (the fields read here; times in nanoseconds). */
interface GhzReport {
  readonly count: number;
  readonly total: number;
  readonly latencyDistribution: readonly { readonly percentage: number; readonly latency: number }[] | null;
  readonly statusCodeDistribution: Readonly<Record<string, number>> | null;
  readonly errorDistribution: Readonly<Record<string, number>> | null;
}

function percentileMs(report: GhzReport, percentage: number): number {
  const entry = report.latencyDistribution?.find((item) => item.percentage === percentage);
  return entry ? entry.latency / 1e6 : Number.NaN;
}

/**
 * `concurrency` ghz workers calling `call` back to back for `seconds`.
 * Calls still in flight at the deadline are not counted (`--duration-stop
 * ignore`), as autocannon does with its requests; answered per second is
 * OK answers over the whole run. Latency percentiles are of OK answers.
 */
export async function ghzLoad(load: GhzLoad): Promise<LoadResult & { readonly errors: Readonly<Record<string, number>> }> {
  const args = [
    "--insecure",
    `--protoset=${PROTOSET}`,
    `--call=${load.call}`,
    `--data=${JSON.stringify(load.data)}`,
    `--metadata=${JSON.stringify(load.metadata)}`,
    `--concurrency=${load.concurrency}`,
    `--connections=${load.connections}`,
    `--duration=${Math.round(load.seconds * 1000)}ms`,
    "--duration-stop=ignore",
    "--timeout=30s",
    "--format=json",
    load.target,
  ];
  const child = spawn(load.ghz, args, { stdio: ["ignore", "pipe", "pipe"] });
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) => resolve(code));
  });
  let deadline: Promise<void> = Promise.resolve();
  if (load.atDeadline && child.pid !== undefined) {
    const { atDeadline } = load;
    const pid = child.pid;
    // A little before the end: ghz may exit right at it.
    deadline = new Promise((resolve) => setTimeout(resolve, Math.max(0, load.seconds * 1000 - 100))).then(() => atDeadline(pid));
  }
  const [code] = await Promise.all([exited, deadline]);
  const text = Buffer.concat(stdout).toString("utf8");
  if (code !== 0 || text.trim() === "") {
    throw new Error(`ghz exited with ${code}: ${Buffer.concat(stderr).toString("utf8").trim() || text.slice(0, 2000)}`);
  }
  const report = JSON.parse(text) as GhzReport;
  const statuses = report.statusCodeDistribution ?? {};
  const ok = statuses.OK ?? 0;
  const failed = Object.entries(statuses).reduce((sum, [status, n]) => (status === "OK" ? sum : sum + n), 0);
  return {
    perSecond: ok / load.seconds,
    p50Ms: percentileMs(report, 50),
    p99Ms: percentileMs(report, 99),
    ok,
    failed,
    errors: report.errorDistribution ?? {},
  };
}
