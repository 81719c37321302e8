import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pgPool, type PoolClient } from "../../src/adapters/postgres/sql.ts";
import { MailService } from "../../src/gen/mail/v1/mail_pb.js";
import { type ApiHarness, bearer, startApiHarness } from "../support/api-harness.ts";

/**
 * A database that cannot serve (every pooled connection busy) answers 503
 * SERVICE_UNAVAILABLE with retry-after on every door, never 500, and the
 * service recovers by itself once connections are free again.
 */
describe("a saturated database", () => {
  let h: ApiHarness;
  let secret: string;

  beforeAll(async () => {
    h = await startApiHarness({ apiPoolMax: 2, databaseAcquireTimeoutMs: 300 });
    ({ secret } = await h.newCompanyWithKey(["mail.events.read", "mail.transactional.send"]));
  });
  afterAll(async () => h?.close());

  async function holdEveryConnection(): Promise<PoolClient[]> {
    const pool = await pgPool(h.app.orm);
    return Promise.all([pool.connect(), pool.connect()]);
  }

  it("answers 503 with retry-after over REST and gRPC while the pool is exhausted, then recovers", async () => {
    expect((await fetch(new URL("/mail/v1/me", h.app.httpUrl), bearer(secret))).status).toBe(200);
    const held = await holdEveryConnection();
    try {
      const rest = await fetch(new URL("/mail/v1/me", h.app.httpUrl), bearer(secret));
      expect(rest.status).toBe(503);
      expect(rest.headers.get("retry-after")).toBe("2");
      expect(rest.headers.get("x-request-id")).toBeTruthy();
      const body = (await rest.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe("SERVICE_UNAVAILABLE");

      const list = await fetch(new URL("/mail/v1/messages", h.app.httpUrl), bearer(secret));
      expect(list.status).toBe(503);

      const grpc = createClient(MailService, createGrpcTransport({ baseUrl: h.app.grpcUrl }));
      const failure = await grpc.getAccount({}, { headers: { authorization: `Bearer ${secret}` } }).then(
        () => undefined,
        (error: unknown) => error as { code: number; metadata: Headers },
      );
      expect(failure?.code).toBe(14); // UNAVAILABLE
      expect(failure?.metadata.get("retry-after")).toBe("2");
    } finally {
      for (const client of held) client.release();
    }
    expect((await fetch(new URL("/mail/v1/me", h.app.httpUrl), bearer(secret))).status).toBe(200);
  });

  it("bounds every statement with statement_timeout (default 30 s)", async () => {
    const pool = await pgPool(h.app.orm);
    const { rows } = await pool.query<{ statement_timeout: string }>("show statement_timeout");
    expect(rows[0]?.statement_timeout).toBe("30s");
  });
});
