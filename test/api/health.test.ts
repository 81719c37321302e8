import { create, type DescMethodUnary } from "@bufbuild/protobuf";
import type { Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HealthService, NOT_SERVING, SERVING } from "../../src/transport/operator/grpc-health.ts";
import { startSendingHarness, type SendingHarness } from "../support/sending-harness.ts";

/**
 * /livez, /readyz and grpc.health.v1.Health/Check against the real
 * dependencies: ready while PostgreSQL and Temporal answer, not ready (503,
 * NOT_SERVING, naming the one that does not) while either is gone, and
 * live throughout.
 */
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

interface Readyz {
  status: string;
  checks: Record<string, string>;
}

describe("health", () => {
  let h: SendingHarness;

  beforeAll(async () => {
    // No worker: it would only complain while Temporal is stopped below.
    h = await startSendingHarness({ runWorker: false });
  }, 120_000);
  afterAll(async () => h?.close());

  async function readyz(base: string): Promise<{ status: number; body: Readyz }> {
    const response = await fetch(new URL("/readyz", base));
    return { status: response.status, body: (await response.json()) as Readyz };
  }

  async function grpcStatus(transport: Transport): Promise<number> {
    const check = HealthService.methods.find((method) => method.name === "Check") as DescMethodUnary;
    const response = await transport.unary(check, undefined, undefined, undefined, create(check.input, {}));
    return (response.message as unknown as { status: number }).status;
  }

  const grpcDoors = (): Transport[] => [
    createGrpcTransport({ baseUrl: h.app.grpcUrl }),
    createConnectTransport({ baseUrl: h.app.httpUrl, httpVersion: "1.1" }),
    createGrpcTransport({ baseUrl: h.app.operatorUrl }),
  ];

  async function database(sql: string): Promise<void> {
    const client = new pg.Client({ connectionString: ADMIN_URL });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }

  it("is live and ready on the public and operator listeners while PostgreSQL and Temporal answer", async () => {
    for (const base of [h.app.httpUrl, h.app.operatorUrl]) {
      const live = await fetch(new URL("/livez", base));
      expect(live.status).toBe(200);
      expect(await live.json()).toEqual({ status: "ok" });
      expect(await readyz(base)).toEqual({ status: 200, body: { status: "ok", checks: { postgres: "ok", temporal: "ok" } } });
    }
    for (const transport of grpcDoors()) expect(await grpcStatus(transport)).toBe(SERVING);
  });

  it("needs no API key and is not rate limited", async () => {
    const answers = await Promise.all(Array.from({ length: 30 }, () => fetch(new URL("/livez", h.app.httpUrl))));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  });

  it("is not ready while PostgreSQL refuses connections, and ready again once it accepts them", async () => {
    const name = h.db.name;
    await database(`alter database ${name} allow_connections false`);
    try {
      await database(`select pg_terminate_backend(pid) from pg_stat_activity where datname = '${name}' and pid <> pg_backend_pid()`);
      const publicAnswer = await readyz(h.app.httpUrl);
      expect(publicAnswer).toEqual({ status: 503, body: { status: "unavailable", checks: { postgres: "failed", temporal: "ok" } } });
      // The operator listener says why.
      const operatorAnswer = await readyz(h.app.operatorUrl);
      expect(operatorAnswer.status).toBe(503);
      expect(operatorAnswer.body.checks.postgres).not.toBe("ok");
      expect(operatorAnswer.body.checks.temporal).toBe("ok");
      for (const transport of grpcDoors()) expect(await grpcStatus(transport)).toBe(NOT_SERVING);
      expect((await fetch(new URL("/livez", h.app.httpUrl))).status).toBe(200);
    } finally {
      await database(`alter database ${name} allow_connections true`);
    }
    expect((await readyz(h.app.httpUrl)).status).toBe(200);
  });

  it("is not ready while Temporal is stopped", async () => {
    await h.temporal.stop();
    const answer = await readyz(h.app.httpUrl);
    expect(answer).toEqual({ status: 503, body: { status: "unavailable", checks: { postgres: "ok", temporal: "failed" } } });
    expect(await grpcStatus(createGrpcTransport({ baseUrl: h.app.grpcUrl }))).toBe(NOT_SERVING);
    expect((await fetch(new URL("/livez", h.app.operatorUrl))).status).toBe(200);
  }, 30_000);
});
