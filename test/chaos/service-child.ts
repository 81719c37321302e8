import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream, type WriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";

const ROOT = path.resolve(import.meta.dirname, "../..");
const ENTRY = "test/chaos/service-process.ts";
/** Start-up includes bundling the workflows (webpack) in a worker: tens of seconds on a busy 2-core machine. */
const READY_TIMEOUT_MS = 120_000;

/**
 * One service process (API or worker) of the chaos suite that the suite
 * kills and starts again. Its output goes to a log file (quoted when it
 * fails); an exit the suite did not ask for is remembered, so the suite
 * can fail with it instead of waiting for progress that cannot come.
 */
export class ServiceChild {
  readonly role: "api" | "worker";
  /** Its name in the timeline and its log file's name: the role unless told (e.g. two workers). */
  readonly name: string;
  readonly logFile: string;
  readonly #env: NodeJS.ProcessEnv;
  readonly #caFile: string;
  readonly #log: WriteStream;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #killing = false;
  /** Exits nobody asked for: "pid 123: exit code 1". */
  readonly unexpectedExits: string[] = [];
  starts = 0;

  constructor(role: "api" | "worker", options: { env: NodeJS.ProcessEnv; caFile: string; logDir: string; name?: string }) {
    this.role = role;
    this.name = options.name ?? role;
    this.#env = options.env;
    this.#caFile = options.caFile;
    this.logFile = path.join(options.logDir, `${this.name}.log`);
    this.#log = createWriteStream(this.logFile, { flags: "a" });
  }

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** Starts the process (with `extraEnv` on top of the common environment) and resolves once it printed `ready`. */
  async start(extraEnv: NodeJS.ProcessEnv = {}): Promise<void> {
    if (this.#child && this.#child.exitCode === null && this.#child.signalCode === null) throw new Error(`${this.name} already runs`);
    this.starts++;
    this.#killing = false;
    this.#log.write(`\n==== start #${this.starts} at ${new Date().toISOString()}\n`);
    const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", ENTRY, this.role, this.#caFile], {
      cwd: ROOT,
      env: { ...this.#env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.#child = child;
    child.stderr?.pipe(this.#log, { end: false });
    this.#exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        if (!this.#killing) this.unexpectedExits.push(`pid ${child.pid}: ${signal ? `signal ${signal}` : `exit code ${String(code)}`}`);
        resolve();
      });
    });
    if (!child.stdout) throw new Error("spawned without a stdout pipe");
    const lines = createInterface({ input: child.stdout });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.name} not ready within ${READY_TIMEOUT_MS} ms; see ${this.logFile}`)), READY_TIMEOUT_MS);
      lines.on("line", (line) => {
        this.#log.write(`${line}\n`);
        if (line === "ready") {
          clearTimeout(timer);
          resolve();
        }
      });
      void this.#exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`${this.name} exited before it was ready; see ${this.logFile}`));
      });
    });
  }

  /** SIGKILL: no shutdown code runs, requests and activities in flight are cut off. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.#killing = true;
    this.#log.write(`==== SIGKILL at ${new Date().toISOString()}\n`);
    child.kill("SIGKILL");
    await this.#exited;
  }

  /** The end of its log, for failure messages. */
  async tail(lines = 40): Promise<string> {
    const text = await readFile(this.logFile, "utf8").catch(() => "");
    return text.split("\n").slice(-lines).join("\n");
  }

  async close(): Promise<void> {
    await this.kill();
    await new Promise<void>((resolve) => this.#log.end(resolve));
  }
}
