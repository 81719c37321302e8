/**
 * `npm start` (src/main.ts) as a newcomer runs it: /readyz answers 200 only
 * once start-up is finished (the worker, the relays, the demo company), so
 * whoever waits for it and then creates a company of their own never stops
 * the demo company from being created on the first start.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findFreePort } from "../../src/runtime/ports.ts";
import { startTemporalDevServer, type TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { OPERATOR_TOKEN } from "../support/api-harness.ts";
import { mailctlAgainst } from "../support/mailctl.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";
import { run, type Running } from "../deploy/processes.ts";

async function companyNames(db: TestDatabase): Promise<string[]> {
  const { rows } = await db.query<{ name: string }>("select name from company order by name");
  return rows.map((row) => row.name);
}

describe("npm start says ready once everything it starts is running", { timeout: 300_000 }, () => {
  let temporal: TemporalDevServer;
  let db: TestDatabase;
  let started: Running | undefined;

  beforeAll(async () => {
    [temporal, db] = await Promise.all([startTemporalDevServer(), createTestDatabase()]);
  });
  afterAll(async () => {
    await started?.kill();
    await temporal?.stop();
    await db?.drop();
  });

  it("a company created the moment /readyz answers 200 leaves the demo company seeded on the first start", async () => {
    const [httpPort, grpcPort, operatorPort] = [await findFreePort(), await findFreePort(), await findFreePort()];
    const operatorUrl = `http://127.0.0.1:${operatorPort}`;
    started = run("src/main.ts", {
      DATABASE_URL: db.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `ready-${randomBytes(3).toString("hex")}`,
      OPERATOR_TOKEN,
      HTTP_PORT: String(httpPort),
      GRPC_PORT: String(grpcPort),
      OPERATOR_PORT: String(operatorPort),
      LOG_LEVEL: "warn",
    });
    const npmStart = started;

    // As a script waiting for the service would: ask often, act at the first 200.
    const readyz = new URL("/readyz", `http://127.0.0.1:${httpPort}`);
    const notReady: number[] = [];
    for (;;) {
      const status = await fetch(readyz).then(
        (answer) => answer.status,
        () => 0,
      );
      if (status === 200) break;
      if (status !== 0) notReady.push(status);
      if (npmStart.child.exitCode !== null) throw new Error(`npm start exited:\n${npmStart.output()}`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const atReady = await companyNames(db);
    await mailctlAgainst(() => operatorUrl).ok(["company", "create", "--name", "Acme Widgets"]);
    await npmStart.waitFor(/^REST \(JSON \/mail\/v1\)/m);

    // Ready meant the demo company was there already, and it stays beside the newcomer's own.
    expect(atReady).toEqual(["Demo Company"]);
    expect(await companyNames(db)).toEqual(["Acme Widgets", "Demo Company"]);
    expect(npmStart.output()).toMatch(/Demo company \S+ created/);
    expect(npmStart.output()).toMatch(/^ {4}tml_\S+$/m);
    // While it was starting, the listeners answered, and said not ready.
    expect(notReady.length).toBeGreaterThan(0);
    expect(new Set(notReady)).toEqual(new Set([503]));
    expect(await npmStart.stop()).toBe(0);
  });
});
