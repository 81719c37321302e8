import { performance } from "node:perf_hooks";

/**
 * Graceful shutdown of an entry process (api-main, worker-main, main): at
 * SIGTERM or SIGINT, `close` stops accepting work, lets what is in flight
 * finish and closes the pools; the process exits once it is done, or after
 * `timeoutMs` whatever is still running (exit code 1). One JSON line (pino's
 * shape) says how long the drain took and what was in flight. A second
 * signal while draining exits at once.
 */
export interface Drainable {
  /** What is in flight now, e.g. { requests: 2, activities: 1 }. */
  inFlight(): Record<string, number>;
  /** Stops accepting, drains, closes. */
  close(): Promise<void>;
}

export interface ShutdownOptions {
  readonly timeoutMs: number;
  /** What the line calls the process: "api", "worker". */
  readonly process: string;
  /** Where the lines go (default: stdout). */
  readonly write?: (line: string) => void;
  /** Default process.exit. */
  readonly exit?: (code: number) => void;
}

type Outcome = "drained" | "timed_out" | "failed";

function line(level: "info" | "warn" | "error", fields: Record<string, unknown>): string {
  const levels = { info: 30, warn: 40, error: 50 } as const;
  return JSON.stringify({ level: levels[level], time: Date.now(), ...fields });
}

/** Runs one graceful shutdown; resolves with the exit code once it is over (for tests), after calling `exit`. */
export async function shutDown(drainable: Drainable, signal: string, options: ShutdownOptions): Promise<number> {
  const write = options.write ?? ((text: string) => process.stdout.write(`${text}\n`));
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const started = performance.now();
  const atSignal = drainable.inFlight();
  write(line("info", { msg: `${signal}: shutting down`, process: options.process, signal, inFlight: atSignal, timeoutMs: options.timeoutMs }));
  let failure: unknown;
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race<Outcome>([
    drainable.close().then(
      () => "drained",
      (error: unknown) => {
        failure = error;
        return "failed";
      },
    ),
    new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve("timed_out"), options.timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  const drainMs = Math.round(performance.now() - started);
  const common = { process: options.process, signal, drainMs, timeoutMs: options.timeoutMs, inFlightAtSignal: atSignal };
  if (outcome === "drained") {
    write(line("info", { msg: `shutdown: drained in ${drainMs} ms`, ...common }));
  } else if (outcome === "timed_out") {
    write(
      line("warn", {
        msg: `shutdown: not drained within ${options.timeoutMs} ms, exiting with work in flight`,
        ...common,
        stillInFlight: drainable.inFlight(),
      }),
    );
  } else {
    const err = failure instanceof Error ? { type: failure.name, message: failure.message } : { message: String(failure) };
    write(line("error", { msg: "shutdown: error while draining", ...common, err }));
  }
  const code = outcome === "drained" ? 0 : 1;
  exit(code);
  return code;
}

/** Shuts `drainable` down gracefully at the first SIGTERM or SIGINT; a second one exits at once. */
export function shutDownOnSignals(drainable: Drainable, options: ShutdownOptions): void {
  let draining = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (draining) {
      (options.write ?? ((text: string) => process.stdout.write(`${text}\n`)))(
        line("warn", { msg: `${signal} again: exiting without waiting for the drain`, process: options.process, signal }),
      );
      (options.exit ?? ((code: number) => process.exit(code)))(1);
      return;
    }
    draining = true;
    void shutDown(drainable, signal, options);
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}
