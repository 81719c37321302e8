/**
 * The processes docker-compose.yml runs, started as the containers start
 * them (`node src/api-main.ts`, `node src/worker-main.ts`) against a real
 * PostgreSQL and Temporal server, and the compose file's own health check
 * commands run against them; plus the development entry's demo seeding,
 * which production mode must never do.
 */
import { execFile } from "node:child_process";
import { mkdtemp, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFreePort } from "../../src/runtime/ports.ts";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { composeFile } from "./deploy-files.ts";
import { ROOT_DIR, run, type Running } from "./processes.ts";

const SECRETS = {
  API_KEY_PEPPER: "pepper-for-the-entrypoint-test-0123456789abcdef",
  DATA_ENCRYPTION_KEY: "sealing-key-for-the-entrypoint-test-0123456789",
  OPERATOR_TOKEN: "operator-token-for-the-entrypoint-test-012345",
  CURSOR_SECRET: "cursor-secret-for-the-entrypoint-test-0123456789",
  FORM_TOKEN_SECRET: "form-token-secret-for-the-entrypoint-test-01234",
  CONFIRMATION_SECRET: "confirmation-secret-for-the-entrypoint-test-0123",
  PUBLIC_BASE_URL: "https://mail.example.test",
  // No relay here: the simulator, which production accepts only when allowed (and then warns at every start).
  EMAIL_PROVIDER: "simulator",
  ALLOW_SIMULATOR_IN_PRODUCTION: "true",
};

/** A health check of docker-compose.yml (`test: [CMD, node, ...]`), run here as Docker would run it in the container. */
function healthCheck(serviceName: string, env: Record<string, string>): Promise<number> {
  const test = composeFile().services[serviceName]?.healthcheck?.test;
  if (!Array.isArray(test) || test[0] !== "CMD" || test[1] !== "node") throw new Error(`${serviceName}: not a node health check`);
  return new Promise((resolve) => {
    execFile(process.execPath, test.slice(2), { cwd: ROOT_DIR, env: { PATH: process.env.PATH ?? "", ...env }, timeout: 30_000 }, (error) =>
      resolve(error ? (typeof error.code === "number" ? error.code : 1) : 0),
    );
  });
}

async function companies(db: TestDatabase): Promise<number> {
  const { rows } = await db.query<{ n: string }>("select count(*) as n from company");
  return Number(rows[0]?.n);
}

describe("refusing a production configuration", { timeout: 120_000 }, () => {
  it.each(["src/api-main.ts", "src/main.ts", "src/worker-main.ts"])("%s exits with one line per problem before starting anything", async (entry) => {
    const dataDir = path.join(await mkdtemp(path.join(tmpdir(), "mail-entry-")), "data");
    try {
      const started = run(entry, { NODE_ENV: "production", MAIL_DATA_DIR: dataDir, HTTP_PORT: "eighty" });
      expect(await started.exited).toBe(1);
      const output = started.output();
      for (const name of [
        "HTTP_PORT",
        "API_KEY_PEPPER",
        "DATA_ENCRYPTION_KEY",
        "OPERATOR_TOKEN",
        "CURSOR_SECRET",
        "FORM_TOKEN_SECRET",
        "CONFIRMATION_SECRET",
        "DATABASE_URL",
        "TEMPORAL_ADDRESS",
        "EMAIL_PROVIDER",
        "PUBLIC_BASE_URL",
      ]) {
        expect(output).toMatch(new RegExp(`^ {2}- ${name} `, "m"));
      }
      // Not even the embedded PostgreSQL of `npm start` was tried.
      await expect(stat(dataDir)).rejects.toThrow();
    } finally {
      await rm(path.dirname(dataDir), { recursive: true, force: true });
    }
  });

  it("prints the problems without a stack trace from the API entries", async () => {
    for (const entry of ["src/api-main.ts", "src/main.ts"]) {
      const started = run(entry, { NODE_ENV: "production" });
      expect(await started.exited).toBe(1);
      expect(started.output()).toMatch(/^refusing to start: the configuration \(production mode\) has 10 problems:\n/);
      expect(started.output()).not.toMatch(/^\s+at /m);
    }
  });
});

describe("the compose topology's processes", { timeout: 240_000 }, () => {
  let temporal: TemporalDevServer;
  const databases: TestDatabase[] = [];
  const processes: Running[] = [];

  beforeAll(async () => {
    temporal = await startTemporalDevServer();
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await temporal?.stop();
    await Promise.all(databases.map((db) => db.drop()));
  });

  async function database(): Promise<TestDatabase> {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  }

  function start(entry: string, env: Record<string, string>): Running {
    const running = run(entry, env);
    processes.push(running);
    return running;
  }

  it("runs the API (no worker) and a worker in production mode, each healthy by its compose health check, nothing seeded", async () => {
    const db = await database();
    const httpPort = await findFreePort();
    const production = {
      ...SECRETS,
      NODE_ENV: "production",
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: "compose-topology",
      LOG_LEVEL: "warn",
    };
    const api = start("src/api-main.ts", {
      ...production,
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(await findFreePort()),
      OPERATOR_PORT: String(await findFreePort()),
      RUN_WORKER: "false",
    });
    await api.waitFor(/API listening: http:\/\/127\.0\.0\.1:\d+/);
    expect(await healthCheck("api", { HTTP_PORT: String(httpPort) })).toBe(0);
    expect(await healthCheck("api", { HTTP_PORT: String(await findFreePort()) })).toBe(1);
    expect(await companies(db)).toBe(0);

    const workerPort = await findFreePort();
    const worker = start("src/worker-main.ts", { ...production, WORKER_OPERATOR_PORT: String(workerPort) });
    await worker.waitFor(/worker running on task queue compose-topology/);
    expect(await healthCheck("worker", { WORKER_OPERATOR_PORT: String(workerPort) })).toBe(0);
    expect(await healthCheck("worker", { WORKER_OPERATOR_PORT: String(await findFreePort()) })).toBe(1);

    expect(await api.stop()).toBe(0);
    expect(await worker.stop()).toBe(0);
    const output = api.output() + worker.output();
    // The simulator in production is allowed here, and each process says so at start.
    for (const running of [api, worker]) expect(running.output()).toContain("EMAIL_PROVIDER=simulator in production (ALLOW_SIMULATOR_IN_PRODUCTION=true)");
    expect(output).not.toContain(SECRETS.OPERATOR_TOKEN);
    expect(output).not.toMatch(/tml_[A-Za-z0-9]/);
  });

  it("npm start seeds the demo company in development mode only", async () => {
    const common = { DATABASE_URL: "", TEMPORAL_ADDRESS: temporal.address, RUN_WORKER: "false", LOG_LEVEL: "warn" };

    const productionDb = await database();
    const production = start("src/main.ts", {
      ...common,
      ...SECRETS,
      NODE_ENV: "production",
      DATABASE_URL: productionDb.url,
      HTTP_PORT: String(await findFreePort()),
      GRPC_PORT: String(await findFreePort()),
      OPERATOR_PORT: String(await findFreePort()),
    });
    await production.waitFor(/^REST \(JSON \/mail\/v1\)/m);
    expect(await production.stop()).toBe(0);
    expect(await companies(productionDb)).toBe(0);
    expect(production.output()).not.toMatch(/Demo company|API key|operator token/i);

    const developmentDb = await database();
    const development = start("src/main.ts", {
      ...common,
      DATABASE_URL: developmentDb.url,
      HTTP_PORT: String(await findFreePort()),
      GRPC_PORT: String(await findFreePort()),
      OPERATOR_PORT: String(await findFreePort()),
    });
    await development.waitFor(/^REST \(JSON \/mail\/v1\)/m);
    expect(await development.stop()).toBe(0);
    expect(await companies(developmentDb)).toBe(1);
    expect(development.output()).toMatch(/Demo company \S+ created/);
    expect(development.output()).toMatch(/^ {4}tml_\S+$/m);
  });
});
