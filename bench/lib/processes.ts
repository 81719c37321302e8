/**
 * The benchmark's child processes: each service process and each baseline
 * runs in a Node process of its own, so each has its own event loop and
 * its memory is measured on its own (/proc/<pid>/status).
 *
 * Two kinds: an entry that says it is ready with a line on stdout (the
 * service's src/api-main.ts, the worker), and a baseline forked with an IPC
 * channel that answers requests (`call`).
 */
import { type ChildProcess, fork } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";

const NODE_OPTIONS = ["--disable-warning=ExperimentalWarning"];

/**
 * The V8 memory settings the service's processes run with in production: the
 * Dockerfile's CMD (the API) and docker-compose.yml's worker command (also
 * `npm run worker`); test/deploy/compose.test.ts keeps them equal to these.
 * A small young generation and a bounded old one keep the API under 250 MB
 * at the benchmark's load with no loss of throughput (docs/benchmarks.md).
 */
export const API_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4", "--max-old-space-size=384"];
export const WORKER_NODE_FLAGS: readonly string[] = ["--max-semi-space-size=4"];
const STOP_GRACE_MS = 10_000;

export interface Child {
  readonly name: string;
  readonly pid: number;
  /** The last lines the process printed (for error reports). */
  readonly tail: string[];
  /** A request over the IPC channel; resolves with the child's answer. */
  call<T>(message: Record<string, unknown>): Promise<T>;
  /** Peak resident set size so far, in MiB (VmHWM). */
  peakRssMb(): Promise<number>;
  /** SIGTERM, then SIGKILL after a grace time; resolves with the peak RSS read just before. */
  stop(): Promise<number>;
}

export interface StartChildOptions {
  readonly name: string;
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  readonly args?: readonly string[];
  /**
   * Ready when a line matches (stdout or stderr), or when `readyCheck`
   * resolves true (polled); else when the child sends `{ ready: true }` over IPC.
   */
  readonly readyLine?: RegExp;
  readonly readyCheck?: () => Promise<boolean>;
  readonly readyTimeoutMs?: number;
  /** Echo the child's output (BENCH_VERBOSE=1). */
  readonly verbose?: boolean;
  /** More Node options (e.g. API_NODE_FLAGS). */
  readonly nodeFlags?: readonly string[];
}

/** VmHWM (peak) or VmRSS of a live process, in MiB. */
export async function rssOf(pid: number, field: "VmHWM" | "VmRSS" = "VmHWM"): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1];
  if (kb === undefined) throw new Error(`no ${field} for pid ${pid}`);
  return Number(kb) / 1024;
}

export async function startChild(options: StartChildOptions): Promise<Child> {
  const child: ChildProcess = fork(options.script, [...(options.args ?? [])], {
    env: options.env,
    execArgv: [...NODE_OPTIONS, ...(options.nodeFlags ?? [])],
    stdio: ["ignore", "pipe", "pipe", "ipc"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`${options.name}: could not start ${options.script}`);
  const tail: string[] = [];
  const lineListeners = new Set<(line: string) => void>();
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > 60) tail.shift();
    if (options.verbose) console.error(`[${options.name}] ${line}`);
    for (const listener of lineListeners) listener(line);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
  if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);

  let exited: string | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = signal ? `signal ${signal}` : `exit code ${String(code)}`;
      resolve();
    });
  });
  // A crashed runner must not leave services running.
  const killOnExit = (): void => void child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  child.on("message", (raw: unknown) => {
    const message = raw as { id?: number; result?: unknown; error?: string };
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`${options.name}: ${message.error}`));
    else waiter?.resolve(message.result);
  });

  const failed = (why: string): Error => new Error(`${options.name} ${why}; its last output:\n${tail.join("\n")}`);
  const ready = new Promise<void>((resolve, reject) => {
    if (options.readyLine) {
      const readyLine = options.readyLine;
      lineListeners.add((line) => {
        if (readyLine.test(line)) resolve();
      });
    } else if (options.readyCheck) {
      const check = options.readyCheck;
      void (async () => {
        while (!exited) {
          if (await check().catch(() => false)) return resolve();
          await sleep(200);
        }
      })();
    } else {
      child.on("message", (raw: unknown) => {
        if ((raw as { ready?: boolean }).ready) resolve();
      });
    }
    void exit.then(() => reject(failed(`exited before it was ready (${exited})`)));
  });
  const timeoutMs = options.readyTimeoutMs ?? 120_000;
  const timer = sleep(timeoutMs).then(() => {
    throw failed(`was not ready after ${timeoutMs / 1000} s`);
  });
  try {
    await Promise.race([ready, timer]);
  } catch (error) {
    child.kill("SIGKILL");
    process.removeListener("exit", killOnExit);
    throw error;
  }

  let stopping: Promise<number> | undefined;
  const handle: Child = {
    name: options.name,
    pid,
    tail,
    call<T>(message: Record<string, unknown>): Promise<T> {
      if (exited) return Promise.reject(failed(`has exited (${exited})`));
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ ...message, id });
        void exit.then(() => reject(failed(`exited during a call (${exited})`)));
      });
    },
    peakRssMb: () => rssOf(pid),
    stop() {
      stopping ??= (async () => {
        const peak = exited ? Number.NaN : await rssOf(pid).catch(() => Number.NaN);
        if (!exited) {
          child.kill("SIGTERM");
          const force = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
          await exit;
          clearTimeout(force);
        }
        process.removeListener("exit", killOnExit);
        return peak;
      })();
      return stopping;
    },
  };
  return handle;
}

/** The IPC side of a forked baseline: answers each request with `handler`'s result, then says it is ready. */
export function serveRequests(handler: (message: Record<string, unknown>) => Promise<unknown>): void {
  process.on("message", (raw: unknown) => {
    const { id, ...message } = raw as { id: number } & Record<string, unknown>;
    handler(message).then(
      (result) => process.send?.({ id, result }),
      (error: unknown) => process.send?.({ id, error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
    );
  });
  process.send?.({ ready: true });
}

/** For a forked baseline: ends the process on SIGTERM after `close`. */
export function stopOnSignal(close: () => Promise<void>): void {
  const stop = (): void => {
    close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
  // The runner died: nobody will ask for anything again.
  process.once("disconnect", stop);
}

/** CPU seconds (user + system) every process has used so far, by pid, with its command name (/proc/<pid>/stat). */
export async function cpuSnapshot(): Promise<Map<number, { readonly comm: string; readonly seconds: number }>> {
  const ticksPerSecond = 100; // USER_HZ on Linux
  const snapshot = new Map<number, { comm: string; seconds: number }>();
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const close = stat.lastIndexOf(")");
    if (close === -1) continue;
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    // Fields after the command: state is field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(close + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (Number.isFinite(ticks)) snapshot.set(Number(entry), { comm, seconds: ticks / ticksPerSecond });
  }
  return snapshot;
}

/**
 * CPU seconds spent between two snapshots, by group: each named pid on its
 * own, the rest of the machine by command name (`temporal`, `postgres`, ...).
 */
export function cpuSpent(
  before: Map<number, { readonly comm: string; readonly seconds: number }>,
  after: Map<number, { readonly comm: string; readonly seconds: number }>,
  named: Readonly<Record<string, number>>,
): Map<string, number> {
  const nameOf = new Map(Object.entries(named).map(([name, pid]) => [pid, name]));
  const spent = new Map<string, number>();
  for (const [pid, now] of after) {
    const delta = now.seconds - (before.get(pid)?.seconds ?? 0);
    if (delta <= 0) continue;
    const group = nameOf.get(pid) ?? now.comm;
    spent.set(group, (spent.get(group) ?? 0) + delta);
  }
  return spent;
}
