import type { Client } from "@temporalio/client";
import type { Config } from "../config.ts";
import type { MikroORM } from "../adapters/postgres/orm.ts";
import { postgresWebhookStores } from "../adapters/postgres/webhooks/index.ts";
import { listenForWebhookWork } from "../adapters/postgres/webhooks/webhook-work-feed.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { dnsHostResolver } from "../adapters/http/dns-host-resolver.ts";
import { HttpsWebhookSender } from "../adapters/http/webhook-sender.ts";
import { WebhookDeliveryDispatcher } from "../adapters/temporal/webhooks/dispatcher.ts";
import { createSecretSealer } from "../capabilities/sending-setup/key-sealing.ts";
import {
  createWebhooks,
  type DeliverySchedule,
  type HostResolver,
  RECEIVER_TIMEOUT_MS,
  WebhookEventPublisher,
  WebhookTargetPolicy,
  type Webhooks,
} from "../capabilities/webhooks/index.ts";

/**
 * Test-only overrides, passed in code by tests (never read from the
 * environment), so no production configuration can reach loopback.
 */
export interface WebhooksTestOverrides {
  readonly resolver?: HostResolver;
  /** Nameservers of the real DNS resolver (`ip:port`), e.g. a local test server; ignored with `resolver`. */
  readonly dnsServers?: readonly string[];
  readonly allowLoopbackForTests?: boolean;
  readonly trustedCaForTests?: string;
  readonly schedule?: DeliverySchedule;
  readonly receiverTimeoutMs?: number;
  /**
   * The capability's clock (rotation overlaps, signature timestamps,
   * attempt times), so a test can let 24 hours pass.
   */
  readonly clock?: () => Date;
}

export interface WebhooksDependencies {
  readonly orm: MikroORM;
  readonly temporal: Client;
  readonly config: Config;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  readonly testOverrides?: WebhooksTestOverrides;
}

export interface WebhooksWiring {
  readonly webhooks: Webhooks;
  /** Events other internal services publish (the EventsService). */
  readonly publisher: WebhookEventPublisher;
  /** The outbox relay: started beside a worker (worker.ts), close() on shutdown (before the Temporal client). */
  readonly dispatcher: WebhookDeliveryDispatcher;
  close(): Promise<void>;
}

export function createWebhooksWiring(deps: WebhooksDependencies): WebhooksWiring {
  const { config } = deps;
  const o = deps.testOverrides ?? {};
  const stores = postgresWebhookStores(deps.orm);
  // Asynchronous DNS with its own deadline, never the thread pool's getaddrinfo.
  const policy = new WebhookTargetPolicy({
    resolver:
      o.resolver ??
      dnsHostResolver({ timeoutMs: config.webhookDnsTimeoutMs, ...(o.dnsServers !== undefined ? { servers: o.dnsServers } : {}) }),
    allowLoopbackForTests: o.allowLoopbackForTests ?? false,
    resolveTimeoutMs: config.webhookDnsTimeoutMs,
  });
  const transport = new HttpsWebhookSender({
    policy,
    timeoutMs: o.receiverTimeoutMs ?? RECEIVER_TIMEOUT_MS,
    ...(o.trustedCaForTests !== undefined ? { trustedCaForTests: o.trustedCaForTests } : {}),
    log: deps.log,
  });
  // A manual retry nudges the relay, which exists only once the capability does.
  const late: { dispatcher?: WebhookDeliveryDispatcher } = {};
  const webhooks = createWebhooks({
    endpointStore: stores.endpointStore,
    deliveryStore: stores.deliveryStore,
    sealer: createSecretSealer(config.dataEncryptionKey, config.dataEncryptionKeys),
    policy,
    transport,
    cursorSecret: config.cursorSecret,
    limits: { perCompany: config.webhookEndpointsPerCompany, perHost: config.webhookEndpointsPerHost },
    nudge: () => late.dispatcher?.kick(),
    ...(o.clock ? { clock: o.clock } : {}),
  });
  const dispatcher = new WebhookDeliveryDispatcher({
    client: deps.temporal,
    taskQueue: config.temporalTaskQueue,
    outbox: stores.outbox,
    ...(o.schedule ? { schedule: o.schedule } : {}),
    log: deps.log,
    relayIntervalMs: config.relayIntervalMs,
    // The relay wakes on NOTIFY; polling stays as the fallback.
    wakeUps: (wake) =>
      listenForWebhookWork(poolOf(deps.orm), {
        changed: wake,
        listening: () => {},
        onError: (error) => deps.log.warn({ err: error }, "webhook work feed: connection lost; the relay polls meanwhile"),
      }),
  });
  late.dispatcher = dispatcher;
  return {
    webhooks,
    publisher: new WebhookEventPublisher({ recorder: stores.publishedEvents, nudge: () => dispatcher.kick() }),
    dispatcher,
    close: () => dispatcher.close(),
  };
}
