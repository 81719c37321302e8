import { execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { Client, Connection } from "@temporalio/client";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startEmbeddedPostgres } from "../../src/runtime/embedded-postgres.ts";
import { findFreePort, isPortOpen } from "../../src/runtime/ports.ts";
import { startTemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";

/**
 * `npm start` killed with SIGKILL (OOM killer, `kill -9`, a crashed
 * container runtime) runs no exit handler: its PostgreSQL and Temporal dev
 * server keep running, holding the data directory and the ports. The next
 * start on the same data directory must come up anyway, with the data.
 */
const RUNTIME = path.resolve(import.meta.dirname, "../../src/runtime");

/** Pids of the direct children of `pid` (Linux procps `ps`). */
function childrenOf(pid: number): number[] {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((line) => Number.parseInt(line, 10))
      .filter((n) => n > 0);
  } catch {
    return [];
  }
}

/** True while `pid` runs (a zombie waiting to be reaped counts as ended). */
function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

describe("starting on a data directory whose servers an earlier run left running", () => {
  let root: string;
  /** Processes the killed run left behind, ended in afterAll whatever happened. */
  const leftovers: number[] = [];

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "mail-crash-restart-"));
    // As root, PostgreSQL runs as the postgres user, who must reach the data directory.
    await chmod(root, 0o755);
  });

  afterAll(async () => {
    for (const pid of leftovers) {
      for (const target of [-pid, pid]) {
        try {
          process.kill(target, "SIGKILL");
        } catch {
          // Gone already (as it should be), or not a group leader.
        }
      }
    }
    await rm(root, { recursive: true, force: true });
  });

  it("after a SIGKILL: stops the PostgreSQL and Temporal dev server of the killed run and comes up on the same data", async () => {
    const pgDir = path.join(root, "postgres");
    const temporalDir = path.join(root, "temporal");
    const [pgPort, temporalPort, uiPort] = [await findFreePort(), await findFreePort(), await findFreePort()];

    // The first run, in a process of its own, as `npm start` would be. It
    // reports ready once the dev server has stopped logging its start-up
    // warnings: a server writing to the pipe of a dead parent dies of
    // SIGPIPE, so only one that has gone quiet (as it is long after start)
    // is reliably left behind by a crash.
    const script = `
      import { startEmbeddedPostgres } from ${JSON.stringify(path.join(RUNTIME, "embedded-postgres.ts"))};
      import { startTemporalDevServer } from ${JSON.stringify(path.join(RUNTIME, "temporal-dev-server.ts"))};
      let lastLog = Date.now();
      const db = await startEmbeddedPostgres({ dataDir: ${JSON.stringify(pgDir)}, port: ${pgPort} });
      const temporal = await startTemporalDevServer({
        dataDir: ${JSON.stringify(temporalDir)}, port: ${temporalPort}, uiPort: ${uiPort}, log: () => { lastLog = Date.now(); },
      });
      const quietBy = Date.now() + 30_000;
      while (Date.now() - lastLog < 3_000 && Date.now() < quietBy) await new Promise((r) => setTimeout(r, 200));
      console.log(JSON.stringify({ url: db.url, address: temporal.address }));
    `;
    const first = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const exited = new Promise<void>((resolve) => first.once("exit", () => resolve()));
    const ready = await new Promise<{ url: string; address: string }>((resolve, reject) => {
      createInterface({ input: first.stdout }).once("line", (line) => resolve(JSON.parse(line) as { url: string; address: string }));
      first.once("exit", (code) => reject(new Error(`the first run exited early (${String(code)})`)));
    });

    // What the first run stored: a table, and a workflow nobody works on.
    const client = new pg.Client({ connectionString: ready.url });
    await client.connect();
    await client.query("create table kept (id int primary key); insert into kept values (7)");
    await client.end();
    const connection = await Connection.connect({ address: ready.address });
    await new Client({ connection }).workflow.start("notRegistered", { taskQueue: "nobody", workflowId: "kept-workflow" });
    await connection.close();

    // SIGKILL the parent only: its children (postgres, temporal) run on.
    const children = childrenOf(first.pid ?? 0);
    leftovers.push(...children);
    first.kill("SIGKILL");
    await exited;
    expect(children).toHaveLength(2);
    expect(children.filter(isAlive)).toEqual(children);

    // The second run: same data directories, same ports.
    const temporal = await startTemporalDevServer({ dataDir: temporalDir, port: temporalPort, uiPort });
    try {
      const db = await startEmbeddedPostgres({ dataDir: pgDir, port: pgPort });
      try {
        // What answers now is the new run's servers, not the killed run's.
        expect(children.filter(isAlive)).toEqual([]);
        const again = new pg.Client({ connectionString: db.url });
        await again.connect();
        try {
          expect((await again.query<{ id: number }>("select id from kept")).rows).toEqual([{ id: 7 }]);
        } finally {
          await again.end();
        }
      } finally {
        await db.stop();
      }
      const connection2 = await Connection.connect({ address: temporal.address });
      try {
        const described = await new Client({ connection: connection2 }).workflow.getHandle("kept-workflow").describe();
        expect(described.status.name).toBe("RUNNING");
      } finally {
        await connection2.close();
      }
    } finally {
      await temporal.stop();
    }
    // Stopping the new run frees the ports: nothing of the killed run held on to them.
    expect(await isPortOpen("127.0.0.1", pgPort)).toBe(false);
    expect(await isPortOpen("127.0.0.1", temporalPort)).toBe(false);
  });

  it("leaves alone the servers of a run that is still alive, and says so", async () => {
    const pgDir = path.join(root, "alive-postgres");
    const temporalDir = path.join(root, "alive-temporal");
    // This (Node) process is the live run: it started them and still runs.
    const db = await startEmbeddedPostgres({ dataDir: pgDir });
    try {
      await expect(startEmbeddedPostgres({ dataDir: pgDir })).rejects.toThrow(/another run of the service/);
      const temporal = await startTemporalDevServer({ dataDir: temporalDir });
      try {
        await expect(startTemporalDevServer({ dataDir: temporalDir })).rejects.toThrow(/another run of the service/);
        // Both still serve.
        const connection = await Connection.connect({ address: temporal.address });
        await connection.close();
      } finally {
        await temporal.stop();
      }
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      await client.end();
    } finally {
      await db.stop();
    }
  });
});
