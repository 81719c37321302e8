/**
 * Finding and stopping a server that an earlier run of the service started
 * and could not stop: a process killed with SIGKILL runs no exit handler,
 * so its PostgreSQL and Temporal dev server keep running, holding the data
 * directory and the ports the next run needs. Uses `ps` (procps on Linux,
 * BSD ps on macOS), whose options used here both understand (`-ww`: never
 * cut a long command line).
 */
import { execFile } from "node:child_process";
import { access, readFile } from "node:fs/promises";
import { promisify } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";

const execFileAsync = promisify(execFile);

export interface ProcessInfo {
  readonly pid: number;
  /** Parent pid: 1 (or a subreaper) once the process that started it died. */
  readonly ppid: number;
  /** The command line, arguments joined by spaces. */
  readonly args: string;
}

const PS_FIELDS = "pid=,ppid=,stat=,args=";

/** A zombie (ended, not yet reaped by its parent) counts as ended: it holds no port or file. */
function isZombie(stat: string): boolean {
  return stat.startsWith("Z");
}

/** Running processes in the output of `ps -o ${PS_FIELDS}`. */
function parsePs(output: string): ProcessInfo[] {
  const processes: ProcessInfo[] = [];
  for (const line of output.split("\n")) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.*)$/.exec(line);
    if (match?.[1] && match[2] && match[3] && match[4] !== undefined && !isZombie(match[3])) {
      processes.push({ pid: Number.parseInt(match[1], 10), ppid: Number.parseInt(match[2], 10), args: match[4] });
    }
  }
  return processes;
}

/** How often `ps` is tried before a failure to run it is reported (fork can fail on a busy machine). */
const PS_TRIES = 3;

/**
 * Runs `ps` with `args`. Resolves to its output, or to undefined when it
 * exits 1 having printed nothing: the way both procps and BSD ps say that
 * no process matched. Any other failure (ps could not be started, was
 * killed, printed an error) is retried and then thrown: a probe that failed
 * must never be read as "that process is gone", or a server still holding
 * its ports would be taken for stopped.
 */
async function ps(args: readonly string[]): Promise<string | undefined> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await execFileAsync("ps", args, { maxBuffer: 16 * 1024 * 1024 });
      return stdout;
    } catch (error) {
      const failed = error as { code?: unknown; stdout?: unknown; stderr?: unknown };
      if (failed.code === 1 && !String(failed.stdout ?? "").trim() && !String(failed.stderr ?? "").trim()) return undefined;
      if (attempt >= PS_TRIES) throw error;
      await sleep(100 * attempt);
    }
  }
}

/** The process `pid` if it runs (zombies do not), with its command line. */
export async function runningProcess(pid: number): Promise<ProcessInfo | undefined> {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const stdout = await ps(["-ww", "-o", PS_FIELDS, "-p", String(pid)]);
  return stdout === undefined ? undefined : parsePs(stdout).find((p) => p.pid === pid);
}

/**
 * True while `pid` runs; a zombie counts as ended (it holds no port or
 * file). Asks the kernel first (signal 0 needs no fork), then, for a process
 * that exists, whether it is a zombie: /proc on Linux, `ps` elsewhere.
 */
export async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ESRCH") return false;
    if (code !== "EPERM") throw error; // EPERM: it exists, owned by another user.
  }
  try {
    return !isZombie(/^\d+ \(.*\) (\S+)/s.exec(await readFile(`/proc/${pid}/stat`, "utf8"))?.[1] ?? "");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT" && (await procMounted())) return false; // Ended meanwhile.
    return (await runningProcess(pid)) !== undefined; // No /proc (macOS).
  }
}

async function procMounted(): Promise<boolean> {
  try {
    await access("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
}

/** Every running process whose command line satisfies `matches`. */
export async function findRunningProcesses(matches: (args: string) => boolean): Promise<ProcessInfo[]> {
  const stdout = (await ps(["-ww", "-A", "-o", PS_FIELDS])) ?? "";
  return parsePs(stdout).filter((p) => p.pid !== process.pid && matches(p.args));
}

/**
 * Refuses to touch a server whose parent is still a live Node process:
 * then it is not left over but in use by another run of the service on the
 * same data directory, which stopping it would break. A server whose
 * starter died has been reparented to init (or a subreaper), never Node.
 */
export async function assertAbandoned(server: ProcessInfo, what: string): Promise<void> {
  const parent = server.ppid > 1 ? await runningProcess(server.ppid) : undefined;
  const command = parent?.args.split(" ")[0] ?? "";
  if (parent !== undefined && /(^|\/)node(\.exe)?$/.test(command)) {
    throw new Error(
      `${what} (pid ${server.pid}) belongs to process ${parent.pid} (${parent.args}), another run of the service; stop that one first`,
    );
  }
}

export interface StopOptions {
  /** Asks for a clean shutdown. */
  readonly signal: NodeJS.Signals;
  /** Sent when the process is still there after `graceMs`. */
  readonly forceSignal: NodeJS.Signals;
  readonly graceMs: number;
  /** Signal the process group led by `pid` (a server started detached, with its own children). */
  readonly group?: boolean;
}

/** Stops `pid` and waits until it is gone; throws if even `forceSignal` does not end it. */
export async function stopProcess(pid: number, options: StopOptions): Promise<void> {
  const send = (signal: NodeJS.Signals): void => {
    for (const target of options.group ? [-pid, pid] : [pid]) {
      try {
        process.kill(target, signal);
        return;
      } catch {
        // ESRCH: not a group leader (try the process alone), or ended in the meantime.
      }
    }
  };
  const endedWithin = async (ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    for (;;) {
      if (!(await isRunning(pid))) return true;
      if (Date.now() > deadline) return false;
      await sleep(100);
    }
  };
  send(options.signal);
  if (await endedWithin(options.graceMs)) return;
  send(options.forceSignal);
  if (await endedWithin(10_000)) return;
  throw new Error(`process ${pid} did not stop after ${options.signal} and ${options.forceSignal}`);
}
