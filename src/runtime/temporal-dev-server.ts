/**
 * A local Temporal server for development and tests: `temporal server
 * start-dev` from the Temporal CLI, with our custom search attributes
 * registered, plus a helper that registers the same attributes on a real
 * cluster (TEMPORAL_ADDRESS).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { constants as fsConstants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import { homedir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { Connection, isGrpcServiceError, type ConnectionOptions } from "@temporalio/client";
import type { SearchAttributeType } from "@temporalio/common";
import { SEARCH_ATTRIBUTES } from "../../workflows/search-attributes.ts";
import { assertAbandoned, findRunningProcesses, stopProcess } from "./leftover-process.ts";
import { findFreePort, isPortOpen, waitForPort, waitForPortClosed } from "./ports.ts";

type AddSearchAttributesRequest = Parameters<Connection["operatorService"]["addSearchAttributes"]>[0];
type IndexedValueType = NonNullable<AddSearchAttributesRequest["searchAttributes"]>[string];

/**
 * How each search attribute type is spelled for the Temporal CLI
 * (`--search-attribute NAME=TYPE`) and on the wire
 * (temporal.api.enums.v1.IndexedValueType, spelled out here because the
 * enum lives in @temporalio/proto, which is not one of our direct
 * dependencies; these values are fixed by the protocol).
 */
const TYPE_NAMES: Readonly<Record<SearchAttributeType, { cli: string; indexed: IndexedValueType }>> = {
  TEXT: { cli: "Text", indexed: 1 as IndexedValueType },
  KEYWORD: { cli: "Keyword", indexed: 2 as IndexedValueType },
  INT: { cli: "Int", indexed: 3 as IndexedValueType },
  DOUBLE: { cli: "Double", indexed: 4 as IndexedValueType },
  BOOL: { cli: "Bool", indexed: 5 as IndexedValueType },
  DATETIME: { cli: "Datetime", indexed: 6 as IndexedValueType },
  KEYWORD_LIST: { cli: "KeywordList", indexed: 7 as IndexedValueType },
};

/** gRPC status ALREADY_EXISTS: another process registered the attribute first. */
const GRPC_ALREADY_EXISTS = 6;

const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export interface TemporalDevServerOptions {
  /** Directory for the SQLite state file (temporal.db). Unset: state lives in memory only. */
  dataDir?: string;
  /** Frontend gRPC port. 0 or unset: a free port. */
  port?: number;
  /** Web UI port. 0 or unset: a free port. */
  uiPort?: number;
  /** Receives every line the server prints (stdout and stderr). */
  log?: (line: string) => void;
}

export interface TemporalDevServer {
  /** host:port of the frontend gRPC service. */
  address: string;
  /** URL of the Web UI. */
  uiUrl: string;
  stop(): Promise<void>;
}

/**
 * Finds the Temporal CLI: $TEMPORAL_CLI_PATH, then `temporal` on PATH, then
 * ~/go/bin/temporal (where `go install` puts it, often not on PATH).
 */
export async function findTemporalCli(env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  const candidates: string[] = [];
  if (env.TEMPORAL_CLI_PATH) candidates.push(env.TEMPORAL_CLI_PATH);
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (dir) candidates.push(path.join(dir, "temporal"));
  }
  candidates.push(path.join(env.HOME ?? homedir(), "go", "bin", "temporal"));
  for (const candidate of candidates) {
    try {
      await access(candidate, fsConstants.X_OK);
      return candidate;
    } catch {
      // Not there or not executable: try the next one.
    }
  }
  return undefined;
}

/**
 * Starts `temporal server start-dev` on 127.0.0.1 and resolves once the
 * frontend answers and our search attributes are visible, so callers can
 * start workflows straight away. Without a local CLI it falls back to
 * @temporalio/testing, which downloads one (needs internet access).
 */
export async function startTemporalDevServer(opts: TemporalDevServerOptions = {}): Promise<TemporalDevServer> {
  // The dev server binds more ports than the two we choose (its HTTP API at
  // port + 1000, metrics): with ports picked for it, a clash with another
  // process is possible; it then exits at once and a new pick succeeds.
  const attempts = opts.port ? 1 : 3;
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts);
    } catch (error) {
      if (attempt >= attempts || !(error instanceof EarlyExitError)) throw error;
    }
  }
}

class EarlyExitError extends Error {
  override readonly name = "EarlyExitError";
}

async function startOnce(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  const host = "127.0.0.1";
  const port = opts.port || (await findFreePort(host));
  const uiPort = opts.uiPort || (await findFreePort(host));
  const log = opts.log ?? (() => {});
  const dbFile = opts.dataDir ? path.join(path.resolve(opts.dataDir), "temporal.db") : undefined;
  if (opts.dataDir) await mkdir(path.resolve(opts.dataDir), { recursive: true });
  const stoppedLeftover = dbFile !== undefined && (await stopLeftoverDevServer(dbFile, log));
  // Otherwise the readiness checks below could be answered by whatever holds
  // the port while our server fails to bind it and exits. A leftover just
  // stopped is given a moment to let go of it.
  if (opts.port && stoppedLeftover) await waitForPortClosed(host, opts.port, Date.now() + STOP_GRACE_MS);
  if (opts.port && (await isPortOpen(host, port))) {
    throw new Error(
      `cannot start the Temporal dev server: ${host}:${port} is in use by another process ` +
        `(to use a Temporal server that is already running, set TEMPORAL_ADDRESS)`,
    );
  }

  const cli = await findTemporalCli();
  if (cli === undefined) return await startViaTestingPackage({ host, port, uiPort, dbFile, log });

  const args = ["server", "start-dev", "--ip", host, "--port", String(port), "--ui-port", String(uiPort)];
  if (dbFile) args.push("--db-filename", dbFile);
  args.push("--log-level", "warn");
  for (const { name, type } of SEARCH_ATTRIBUTES) {
    args.push("--search-attribute", `${name}=${TYPE_NAMES[type].cli}`);
  }

  // Own process group, so stop() can signal the server and anything it
  // spawned in one go, and a Ctrl-C in our terminal is not delivered to it
  // before we had a chance to shut it down in order.
  const child = spawn(cli, args, { detached: true, stdio: ["ignore", "pipe", "pipe"] });
  const tail: string[] = [];
  const onLine = (line: string): void => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    log(line);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on("line", onLine);
  if (child.stderr) createInterface({ input: child.stderr }).on("line", onLine);

  let exitInfo: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exitInfo = signal ? `signal ${signal}` : `exit code ${String(code)}`;
      resolve();
    });
    child.once("error", (err) => {
      exitInfo = `spawn error: ${err.message}`;
      resolve();
    });
  });
  // If this Node process ends without calling stop() (crash, process.exit),
  // do not leave an orphaned server holding the ports.
  const killOnExit = (): void => killGroup(child, "SIGKILL");
  process.once("exit", killOnExit);

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      if (exitInfo === undefined) {
        killGroup(child, "SIGTERM");
        const timer = setTimeout(() => killGroup(child, "SIGKILL"), STOP_GRACE_MS);
        await exited;
        clearTimeout(timer);
      }
    })();
    return stopping;
  };

  const address = `${host}:${port}`;
  const failure = (): Error | undefined =>
    exitInfo === undefined
      ? undefined
      : new EarlyExitError(`temporal server start-dev exited early (${exitInfo}):\n${tail.join("\n")}`);
  try {
    const deadline = Date.now() + READY_TIMEOUT_MS;
    await waitForPort(host, port, deadline, failure);
    await waitForSearchAttributes(address, "default", deadline, failure);
  } catch (err) {
    await stop();
    throw err;
  }
  return { address, uiUrl: `http://${host}:${uiPort}`, stop };
}

/**
 * A run killed with SIGKILL leaves its dev server running (in a process
 * group of its own, so nothing else ends it either), holding the state file
 * and the ports. The one of this data directory is recognised by its
 * command line and stopped as stop() would; an in-memory dev server has
 * nothing to recognise it by, and no state worth keeping.
 */
async function stopLeftoverDevServer(dbFile: string, log: (line: string) => void): Promise<boolean> {
  const ours = `--db-filename ${dbFile}`;
  const leftovers = await findRunningProcesses(
    (args) => args.includes(" server start-dev ") && (args.includes(`${ours} `) || args.endsWith(ours)),
  );
  for (const leftover of leftovers) {
    await assertAbandoned(leftover, `the Temporal dev server of ${dbFile}`);
    log(`stopping the Temporal dev server (pid ${leftover.pid}) left running on ${dbFile} by an earlier run`);
    await stopProcess(leftover.pid, { signal: "SIGTERM", forceSignal: "SIGKILL", graceMs: STOP_GRACE_MS, group: true });
  }
  return leftovers.length > 0;
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    // Negative pid: the whole process group (see `detached: true`).
    process.kill(-child.pid, signal);
  } catch {
    // ESRCH: already gone.
  }
}

async function startViaTestingPackage(p: {
  host: string;
  port: number;
  uiPort: number;
  dbFile: string | undefined;
  log: (line: string) => void;
}): Promise<TemporalDevServer> {
  p.log("temporal CLI not found (TEMPORAL_CLI_PATH, PATH, ~/go/bin); using @temporalio/testing, which downloads it");
  // Loaded lazily: @temporalio/testing pulls in the native worker bridge,
  // which the normal path has no use for.
  const { TestWorkflowEnvironment } = await import("@temporalio/testing");
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      ip: p.host,
      port: p.port,
      ui: true,
      uiPort: p.uiPort,
      ...(p.dbFile ? { dbFilename: p.dbFile } : {}),
      log: { format: "pretty", level: "warn" },
    },
  });
  try {
    await ensureSearchAttributes(env.address, "default");
  } catch (err) {
    await env.teardown();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    address: env.address,
    uiUrl: `http://${p.host}:${p.uiPort}`,
    stop: () => (stopping ??= env.teardown()),
  };
}

/**
 * Connects, retrying until `deadline`: right after the port opens the
 * frontend can still refuse calls while its services start.
 */
async function connectUntil(
  options: ConnectionOptions,
  deadline: number,
  abort?: () => Error | undefined,
): Promise<Connection> {
  for (;;) {
    const failure = abort?.();
    if (failure) throw failure;
    try {
      return await Connection.connect({ ...options, connectTimeout: "5s" });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

async function missingSearchAttributes(connection: Connection, namespace: string): Promise<string[]> {
  const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
  return SEARCH_ATTRIBUTES.filter(({ name, type }) => customAttributes?.[name] !== TYPE_NAMES[type].indexed).map(({ name }) => name);
}

async function waitForSearchAttributes(
  address: string,
  namespace: string,
  deadline: number,
  abort: () => Error | undefined,
): Promise<void> {
  const connection = await connectUntil({ address }, deadline, abort);
  try {
    for (;;) {
      const failure = abort();
      if (failure) throw failure;
      let missing: string[];
      try {
        missing = await missingSearchAttributes(connection, namespace);
      } catch (err) {
        // The default namespace may not be registered yet just after start.
        if (Date.now() > deadline) throw err;
        missing = ["(listSearchAttributes failed)"];
      }
      if (missing.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(`Temporal dev server at ${address} did not register search attributes: ${missing.join(", ")}`);
      }
      await sleep(250);
    }
  } finally {
    await connection.close();
  }
}

/**
 * Registers SEARCH_ATTRIBUTES (workflows/search-attributes.ts) in `namespace` of an existing server and
 * waits until they are visible. Idempotent: attributes already present are
 * left alone, and losing a race with another process doing the same is fine.
 * Throws when an attribute exists with a different type, which a server does
 * not let us change.
 */
export async function ensureSearchAttributes(
  address: string,
  namespace: string,
  connectionOptions: Omit<ConnectionOptions, "address"> = {},
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const connection = await connectUntil({ ...connectionOptions, address }, deadline);
  try {
    // One loop both registers and waits: the server's metadata cache can
    // take a moment to report new attributes, and a concurrent registration
    // by another process makes our whole batch fail with ALREADY_EXISTS even
    // though some of it may still be missing; either way, list and retry.
    for (;;) {
      const { customAttributes } = await connection.operatorService.listSearchAttributes({ namespace });
      const toAdd: Record<string, IndexedValueType> = {};
      for (const { name, type } of SEARCH_ATTRIBUTES) {
        const existing = customAttributes?.[name];
        if (existing === undefined || existing === null) {
          toAdd[name] = TYPE_NAMES[type].indexed;
        } else if (existing !== TYPE_NAMES[type].indexed) {
          throw new Error(
            `search attribute ${name} exists in namespace ${namespace} with indexed value type ${String(existing)}, expected ${type}`,
          );
        }
      }
      const missing = Object.keys(toAdd);
      if (missing.length === 0) return;
      if (Date.now() > deadline) {
        throw new Error(`search attributes not registered in namespace ${namespace}: ${missing.join(", ")}`);
      }
      try {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: toAdd });
      } catch (err) {
        if (!(isGrpcServiceError(err) && err.code === GRPC_ALREADY_EXISTS)) throw err;
      }
      await sleep(250);
    }
  } finally {
    await connection.close();
  }
}
