import { execFile, spawnSync } from "node:child_process";
import { chmod, copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { promisify } from "node:util";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listenForChanges } from "../../src/adapters/postgres/change-feed.ts";
import { openOrm } from "../../src/adapters/postgres/orm.ts";
import { poolOf } from "../../src/adapters/postgres/sql.ts";
import { assertProgramsRunnable, startEmbeddedPostgres } from "../../src/runtime/embedded-postgres.ts";
import { findFreePort, isPortOpen, waitForPortClosed } from "../../src/runtime/ports.ts";

/** The postgres user's uid/gid, when these tests run as root (as CI does) and it exists. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  const [uid, gid] = [id("-u"), id("-g")];
  return uid.status === 0 && gid.status === 0 ? { uid: Number(uid.stdout), gid: Number(gid.stdout) } : undefined;
}

describe("the PostgreSQL programs, as root", () => {
  const owner = postgresUser();
  it.runIf(owner !== undefined)("are refused with the cause named when the postgres user cannot reach them (a project in a 0700 directory)", async () => {
    const closed = await mkdtemp(path.join(tmpdir(), "mail-closed-")); // 0700, root's
    try {
      await mkdir(path.join(closed, "bin"));
      const program = path.join(closed, "bin", "initdb");
      await copyFile("/bin/true", program);
      await chmod(program, 0o755);
      expect(() => assertProgramsRunnable([program], owner ?? { uid: 0, gid: 0 })).toThrow(/postgres user \(uid \d+\) cannot run .*initdb: every directory above it must be searchable/);
      await chmod(closed, 0o711);
      expect(() => assertProgramsRunnable([program], owner ?? { uid: 0, gid: 0 })).not.toThrow();
    } finally {
      await rm(closed, { recursive: true, force: true });
    }
  });
});

describe("startEmbeddedPostgres", () => {
  let root: string;

  beforeAll(async () => {
    root = await mkdtemp(path.join(tmpdir(), "mail-embedded-pg-"));
    // mkdtemp makes the directory 0700; as root, initdb runs as the postgres
    // user, who must be able to reach the data directory inside it.
    await chmod(root, 0o755);
  });

  afterAll(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it("initialises a cluster, serves the mail database, and reuses the data directory", async () => {
    const dataDir = path.join(root, "pg");
    const port = await findFreePort();

    const first = await startEmbeddedPostgres({ dataDir, port });
    try {
      expect(first.url).toBe(`postgres://postgres:postgres@127.0.0.1:${port}/mail`);
      const client = new pg.Client({ connectionString: first.url });
      await client.connect();
      try {
        const result = await client.query<{ one: number }>("select 1 as one");
        expect(result.rows).toEqual([{ one: 1 }]);
        await client.query("create table kept (id int primary key)");
        await client.query("insert into kept values (42)");
      } finally {
        await client.end();
      }
    } finally {
      await first.stop();
    }
    expect(await isPortOpen("127.0.0.1", port)).toBe(false);

    // Second start on another free port: no initdb, same data.
    const second = await startEmbeddedPostgres({ dataDir });
    try {
      const client = new pg.Client({ connectionString: second.url });
      await client.connect();
      try {
        const result = await client.query<{ id: number }>("select id from kept");
        expect(result.rows).toEqual([{ id: 42 }]);
      } finally {
        await client.end();
      }
    } finally {
      await second.stop();
    }
  });

  it("stops the cluster when its process ends without calling stop()", async () => {
    const dataDir = path.join(root, "abandoned");
    const port = await findFreePort();
    const script = `
      import { startEmbeddedPostgres } from ${JSON.stringify(path.resolve(import.meta.dirname, "../../src/runtime/embedded-postgres.ts"))};
      await startEmbeddedPostgres({ dataDir: ${JSON.stringify(dataDir)}, port: ${port} });
      process.exit(0);
    `;
    await promisify(execFile)(process.execPath, ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", script]);
    await waitForPortClosed("127.0.0.1", port, Date.now() + 15_000);
    expect(await isPortOpen("127.0.0.1", port)).toBe(false);
  });

  // The ORM hands pg the password apart from the URL, and pg hides it from the pool's
  // enumerable options: the change feeds' own connection must still carry it.
  it("lets the change feeds listen on a server that wants a password", async () => {
    const server = await startEmbeddedPostgres({ dataDir: path.join(root, "feed") });
    const orm = await openOrm(server.url);
    const states: boolean[] = [];
    const errors: unknown[] = [];
    let changes = 0;
    const feed = listenForChanges(poolOf(orm), "mail_feed_test", {
      changed: () => changes++,
      listening: (on) => states.push(on),
      onError: (error) => errors.push(error),
    }, "mail-feed-test");
    try {
      const deadline = Date.now() + 15_000;
      while (!states.includes(true) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(errors.map(String)).toEqual([]);
      expect(states).toContain(true);
      await (await poolOf(orm)()).query("notify mail_feed_test");
      while (changes === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(changes).toBeGreaterThan(0);
    } finally {
      await feed.close();
      await orm.close();
      await server.stop();
    }
  });
});
