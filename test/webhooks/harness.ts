import { randomUUID } from "node:crypto";
import { migrate, openOrm, type MikroORM } from "../../src/adapters/postgres/orm.ts";
import { type Pool, poolOf } from "../../src/adapters/postgres/sql.ts";
import { PostgresWebhookDeliveryStore } from "../../src/adapters/postgres/webhooks/postgres-webhook-delivery-store.ts";
import { PostgresWebhookEndpointStore } from "../../src/adapters/postgres/webhooks/postgres-webhook-endpoint-store.ts";
import { PostgresWebhookOutbox } from "../../src/adapters/postgres/webhooks/postgres-webhook-outbox.ts";
import { createSecretSealer, type SecretSealer } from "../../src/capabilities/sending-setup/key-sealing.ts";
import type { WebhookTransport } from "../../src/capabilities/webhooks/delivery-attempt.ts";
import { type HostResolver, type ResolvedAddress, WebhookTargetPolicy } from "../../src/capabilities/webhooks/ssrf-policy.ts";
import { webhookUseCases, type WebhookUseCases } from "../../src/wiring/webhooks.ts";
import { createTestDatabase, type TestDatabase } from "../support/test-database.ts";

/**
 * The webhooks capability on a fresh migrated database with its PostgreSQL
 * adapters, a resolver the test controls (names -> addresses) and a
 * transport the test chooses (a real HTTPS sender, or a fake).
 */
export interface WebhooksHarness {
  readonly db: TestDatabase;
  readonly orm: MikroORM;
  readonly pool: () => Promise<Pool>;
  readonly webhooks: WebhookUseCases;
  readonly endpointStore: PostgresWebhookEndpointStore;
  readonly deliveryStore: PostgresWebhookDeliveryStore;
  readonly outbox: PostgresWebhookOutbox;
  /** name -> addresses the policy's resolver answers; change it at will. */
  readonly dns: Map<string, string[]>;
  readonly policy: WebhookTargetPolicy;
  /** The sealer of the endpoints' secrets. */
  readonly sealer: SecretSealer;
  /** The harness clock: `now.value` is what the capability sees (default: real time). */
  readonly now: { value: Date | undefined };
  /** How many times the relay was nudged. */
  readonly nudges: { count: number };
  newCompany(name?: string): Promise<string>;
  /** Writes an event into the outbox as the capabilities do (returns its id). */
  recordEvent(companyId: string, event: string, data?: Record<string, unknown>, occurredAt?: Date): Promise<string>;
  close(): Promise<void>;
}

export interface WebhooksHarnessOptions {
  readonly transport?: WebhookTransport;
  readonly allowLoopback?: boolean;
}

/** A public address for names that must pass the policy without being contacted. */
export const PUBLIC_ADDRESS = "93.184.215.14";

export async function openWebhooksHarness(options: WebhooksHarnessOptions = {}): Promise<WebhooksHarness> {
  const db = await createTestDatabase();
  const orm = await openOrm(db.url, { poolMax: 6 });
  await migrate(orm);
  const pool = poolOf(orm);
  const dns = new Map<string, string[]>([["hooks.example.com", [PUBLIC_ADDRESS]]]);
  const resolver: HostResolver = {
    async resolve(hostname): Promise<readonly ResolvedAddress[]> {
      const answer = dns.get(hostname);
      if (!answer) throw new Error(`getaddrinfo ENOTFOUND ${hostname}`);
      return answer.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
    },
  };
  const policy = new WebhookTargetPolicy({ resolver, allowLoopback: options.allowLoopback ?? false });
  const endpointStore = new PostgresWebhookEndpointStore(orm);
  const deliveryStore = new PostgresWebhookDeliveryStore(pool);
  const now: { value: Date | undefined } = { value: undefined };
  const nudges = { count: 0 };
  const refusing: WebhookTransport = {
    post: async () => {
      throw new Error("this harness has no transport");
    },
  };
  const sealer = createSecretSealer("test-data-encryption-key");
  const webhooks = webhookUseCases({
    endpointStore,
    deliveryStore,
    sealer,
    policy,
    transport: options.transport ?? refusing,
    cursorSecret: "test-cursor-secret",
    // Tests here reuse one host name for many endpoints; the limits are proven in test/hostile/endpoint-flood.test.ts.
    limits: { perCompany: 1000, perHost: 1000 },
    nudge: () => void nudges.count++,
    clock: () => now.value ?? new Date(),
  });

  return {
    db,
    orm,
    pool,
    webhooks,
    endpointStore,
    deliveryStore,
    outbox: new PostgresWebhookOutbox(pool),
    dns,
    policy,
    sealer,
    now,
    nudges,
    async newCompany(name = "Acme Inc.") {
      const { rows } = await (await pool()).query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
      return (rows[0] as { id: string }).id;
    },
    async recordEvent(companyId, event, data = { messageId: randomUUID(), email: "ada@example.com" }, occurredAt = new Date()) {
      const { rows } = await (await pool()).query<{ id: string }>(
        `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key) values ($1, $2, $3, $4, $5) returning id`,
        [companyId, event, occurredAt, JSON.stringify(data), `test:${randomUUID()}`],
      );
      return (rows[0] as { id: string }).id;
    },
    async close() {
      await orm.close();
      await db.drop();
    },
  };
}

/** The code of an ApiError a promise rejects with (or "resolved"). */
export async function errorCode(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return "resolved";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}
