/**
 * The service's entry points started as separate OS processes, the way a
 * container (or a test of the deployment) starts them: `node <entry>` with
 * exactly the environment given (plus PATH and HOME), output collected.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export const ROOT_DIR = fileURLToPath(new URL("../../", import.meta.url));

export interface Running {
  readonly child: ChildProcess;
  /** stdout and stderr so far, interleaved. */
  output(): string;
  /** Resolves once the output matches `pattern`; rejects if the process exits first or after `timeoutMs`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  /** SIGTERM (unless it has exited), then the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (unless it has exited). */
  kill(): Promise<void>;
  readonly exited: Promise<number | null>;
}

/** `node <entry> [args]` with exactly `env` (plus PATH and HOME). */
export function run(entry: string, env: Record<string, string>, args: readonly string[] = []): Running {
  const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", entry, ...args], {
    cwd: ROOT_DIR,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    output += chunk.toString("utf8");
    for (const waiter of waiters) waiter();
  };
  child.stdout?.on("data", onData);
  child.stderr?.on("data", onData);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern, timeoutMs = 90_000) {
      return new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if (!pattern.test(output)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new Error(`${entry} did not print ${String(pattern)} in ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const onExit = (): void => {
          // The last output may arrive with the exit.
          setImmediate(() => {
            if (pattern.test(output)) return resolve();
            cleanup();
            reject(new Error(`${entry} exited before printing ${String(pattern)}:\n${output}`));
          });
        };
        const cleanup = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
          child.removeListener("exit", onExit);
        };
        waiters.add(check);
        child.once("exit", onExit);
        check();
      });
    },
    async stop() {
      if (running()) child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      if (running()) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** The JSON lines of `output` whose `msg` matches `pattern`, parsed. */
export function jsonLines(output: string, pattern: RegExp): Record<string, unknown>[] {
  return output
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => {
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return {};
      }
    })
    .filter((entry) => typeof entry.msg === "string" && pattern.test(entry.msg));
}

/** Polls `read` until `done` holds; fails after `timeoutMs` with the last value. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000, what = "a condition"): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      last = await read();
      if (done(last)) return last;
    } catch (error) {
      lastError = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} did not hold within ${timeoutMs} ms; last: ${JSON.stringify(last)} ${lastError ? String(lastError) : ""}`);
}

/** The value of the Prometheus sample `name` whose labels include `labels` (summed over the others; 0 when absent). */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelText = line.includes("{") ? line.slice(line.indexOf("{") + 1, line.lastIndexOf("}")) : "";
    const found = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([key, value]) => found[key] === value)) total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}
