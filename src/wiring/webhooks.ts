import type { Client } from "@temporalio/client";
import type { Config } from "../config.ts";
import type { MikroORM } from "../adapters/postgres/orm.ts";
import { postgresWebhookStores } from "../adapters/postgres/webhooks/index.ts";
import { listenForWebhookWork } from "../adapters/postgres/webhooks/webhook-work-feed.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { dnsHostResolver } from "../adapters/http/dns-host-resolver.ts";
import { HttpsWebhookSender } from "../adapters/http/webhook-sender.ts";
import { WebhookDeliveryDispatcher } from "../adapters/temporal/webhooks/dispatcher.ts";
import { createSecretSealer, type SecretSealer } from "../capabilities/sending-setup/key-sealing.ts";
import {
  DeliveryAttempts,
  type DeliverySchedule,
  type EndpointLimits,
  type HostResolver,
  RECEIVER_TIMEOUT_MS,
  WebhookDeliveries,
  type WebhookDeliveryStore,
  type WebhookEndpointStore,
  WebhookEndpoints,
  WebhookEventPublisher,
  WebhookTargetPolicy,
  WebhookTestEvents,
  type WebhookTransport,
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

/** The ports the webhooks use cases are built from. */
export interface WebhookParts {
  readonly endpointStore: WebhookEndpointStore;
  readonly deliveryStore: WebhookDeliveryStore;
  /** The service's secret sealer (DATA_ENCRYPTION_KEY), shared with DKIM keys. */
  readonly sealer: SecretSealer;
  readonly policy: WebhookTargetPolicy;
  readonly transport: WebhookTransport;
  /** Secret of the deliveries list's cursors. */
  readonly cursorSecret: string;
  /** Bounds on a company's endpoints. Default 20 per company, 3 per host. */
  readonly limits?: EndpointLimits;
  /** Asks the relay for a pass now (after a manual retry). */
  readonly nudge?: () => void;
  readonly clock?: () => Date;
}

/** The webhooks capability's use cases. */
export interface WebhookUseCases {
  readonly endpoints: WebhookEndpoints;
  readonly deliveries: WebhookDeliveries;
  /** The attempt the delivery workflow's activity makes. */
  readonly attempts: DeliveryAttempts;
  /** "Send test event" of the administration screen. */
  readonly testEvents: WebhookTestEvents;
}

/** Builds the use cases from their ports (whoever brings other stores or another transport builds them here too). */
export function webhookUseCases(parts: WebhookParts): WebhookUseCases {
  const clock = parts.clock ? { clock: parts.clock } : {};
  const { endpointStore, deliveryStore, sealer, transport } = parts;
  return {
    endpoints: new WebhookEndpoints({
      store: endpointStore,
      sealer,
      policy: parts.policy,
      health: deliveryStore,
      ...(parts.limits ? { limits: parts.limits } : {}),
      ...clock,
    }),
    deliveries: new WebhookDeliveries({
      store: deliveryStore,
      endpoints: endpointStore,
      cursorSecret: parts.cursorSecret,
      ...(parts.nudge ? { nudge: parts.nudge } : {}),
      ...clock,
    }),
    attempts: new DeliveryAttempts({ store: deliveryStore, sealer, transport, ...clock }),
    testEvents: new WebhookTestEvents({ store: endpointStore, sealer, transport, ...clock }),
  };
}

export interface WebhooksDependencies {
  readonly orm: MikroORM;
  readonly temporal: Client;
  readonly config: Config;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  readonly testOverrides?: WebhooksTestOverrides;
}

export interface WebhooksWiring {
  readonly webhooks: WebhookUseCases;
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
  // A manual retry nudges the relay, which exists only once the use cases do.
  const late: { dispatcher?: WebhookDeliveryDispatcher } = {};
  const webhooks = webhookUseCases({
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
