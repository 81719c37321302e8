import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess } from "../../src/wiring/worker.ts";
import { findFreePort } from "../../src/runtime/ports.ts";
import type { TemporalDevServer } from "../../src/runtime/temporal-dev-server.ts";
import { type SendingHarness, startSendingHarness } from "../support/sending-harness.ts";
import { startTemporalDevServer as startTestTemporal } from "../../src/runtime/temporal-dev-server.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");

async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("an accepted message is sent even when Temporal is down at that moment", () => {
  let dataDir: string;
  let port: number;
  let temporal: TemporalDevServer;
  let h: SendingHarness;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "mail-temporal-"));
    port = await findFreePort();
    temporal = await startTestTemporal({ port, dataDir });
    // No worker in the API process: the test starts one once Temporal is back.
    h = await startSendingHarness({ runWorker: false }, temporal);
  });
  afterAll(async () => {
    await h?.close();
    await temporal?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers 202 while Temporal is unreachable, and the outbox relay starts the workflow when it is back", async () => {
    const s = await h.readySender({ credits: 2 });
    await temporal.stop();

    const response = await h.send(s.secret, { to: "delivered@outage.example", subject: "During the outage", html: "<p>x</p>" });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    const row = await h.db.query<{ status: string; workflow_started_at: Date | null }>(
      `select status, workflow_started_at from message where id = $1`,
      [id],
    );
    expect(row.rows[0]).toEqual({ status: "queued", workflow_started_at: null });

    temporal = await startTestTemporal({ port, dataDir });
    const worker = await startWorkerProcess(h.app.config, h.db.url, { warn: () => undefined });
    try {
      const message = await h.waitForMessage(s.secret, id, (m) => m.status === "delivered", 60_000);
      expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery"]);
      const handoffs = await h.db.query(`select 1 from simulator_handoff where message_id = $1`, [id]);
      expect(handoffs.rowCount).toBe(1);
      const charges = await h.db.query(`select 1 from credit_ledger where message_id = $1 and reason = 'charge'`, [id]);
      expect(charges.rowCount).toBe(1);
    } finally {
      await worker.stop();
    }
  });
});

describe("a worker killed in the middle of a handoff", () => {
  let h: SendingHarness;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    h = await startSendingHarness({ runWorker: false, handoffTimeoutSeconds: 4 });
  });
  afterAll(async () => {
    for (const child of children) child.kill("SIGKILL");
    await h?.close();
  });

  function spawnWorker(extraEnv: Record<string, string>): ChildProcess {
    const config = h.app.config;
    const child = spawn(process.execPath, ["--disable-warning=ExperimentalWarning", "src/worker-main.ts"], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: h.db.url,
        TEMPORAL_ADDRESS: config.temporalAddress ?? "",
        TEMPORAL_TASK_QUEUE: config.temporalTaskQueue,
        API_KEY_PEPPER: config.apiKeyPepper,
        LOG_LEVEL: "warn",
        ...extraEnv,
      },
      stdio: ["ignore", "ignore", "inherit"],
    });
    children.push(child);
    return child;
  }

  it("causes neither a second handoff nor a second charge", async () => {
    const s = await h.readySender({ credits: 3 });
    // The first worker's email service takes the message, then answers slowly.
    const doomed = spawnWorker({ SIMULATOR_HANDOFF_DELAY_MS: "60000" });
    const { id } = (await (await h.send(s.secret, { to: "delivered@crash.example", subject: "Crash", html: "<p>x</p>" })).json()) as { id: string };

    await waitFor(
      async () => ((await h.db.query(`select 1 from simulator_handoff where message_id = $1`, [id])).rowCount ? true : undefined),
      60_000,
      "the first handoff",
    );
    doomed.kill("SIGKILL");
    await new Promise((resolve) => doomed.once("exit", resolve));
    const midway = await h.db.query<{ status: string }>(`select status from message where id = $1`, [id]);
    expect(midway.rows[0]?.status).toBe("processing");

    // A healthy worker picks the activity up once its attempt times out.
    spawnWorker({});
    // The lifecycle runs to its end: delivered, after exactly one "sent".
    const message = await h.waitForMessage(s.secret, id, (m) => m.status === "delivered", 60_000);
    expect(message.providerMessageId).toMatch(/^sim_/);
    expect(message.events.map((e) => e.type)).toEqual(["sent", "delivery"]);

    const handoffs = await h.db.query<{ provider_message_id: string }>(`select provider_message_id from simulator_handoff where message_id = $1`, [id]);
    expect(handoffs.rows).toEqual([{ provider_message_id: message.providerMessageId }]);
    const ledger = await h.db.query<{ reason: string }>(`select reason from credit_ledger where message_id = $1`, [id]);
    expect(ledger.rows).toEqual([{ reason: "charge" }]);
    const wallet = await h.db.query<{ balance: string }>(`select balance::text from credit_wallet where company_id = $1`, [s.companyId]);
    expect(wallet.rows[0]?.balance).toBe("2");
  });
});
