import type { Client } from "@temporalio/client";
import type { Config } from "../config.ts";
import type { MikroORM } from "../adapters/postgres/orm.ts";
import { postgresWebhookStores } from "../adapters/postgres/webhooks/index.ts";
import { listenForWebhookWork } from "../adapters/postgres/webhooks/webhook-work-feed.ts";
import { PostgresLiveEventFeed } from "../adapters/postgres/webhooks/live-event-feed.ts";
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
  LiveEvents,
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
 * How webhook deliveries reach receivers, beside what the environment
 * configures (src/config.ts). Passed in code by whoever builds the process
 * (src/wiring/api.ts, worker.ts); the service's own entries pass none, and
 * every field has the spec's default.
 */
export interface WebhookDeliveryOptions {
  /** Resolves endpoint host names. Default: asynchronous DNS with WEBHOOK_DNS_TIMEOUT_MS, on `nameservers`. */
  readonly resolver?: HostResolver;
  /** Nameservers (`ip` or `ip:port`) of the default resolver. Default: the system's (/etc/resolv.conf). */
  readonly nameservers?: readonly string[];
  /**
   * The certificate authorities (PEM) a receiver's certificate must chain
   * to, replacing Node's bundled list: receivers under a private PKI.
   */
  readonly trustedCa?: string;
  /**
   * Lets endpoints on loopback addresses (127.0.0.0/8, ::1) receive
   * deliveries: a receiver on the same machine (development, the
   * benchmarks, the suite's HTTPS receivers). Refused in production mode (NODE_ENV or
   * MAIL_MODE production): no environment variable sets it, and a process in
   * production mode that is given it does not start. Private and internal
   * addresses stay refused either way.
   */
  readonly allowLoopback?: boolean;
  /** The retry schedule the relay writes into each delivery workflow it starts. Default: the spec's (5 attempts, 1 min to 1 h apart). */
  readonly schedule?: DeliverySchedule;
  /** One attempt's budget: lookup, connection, TLS and status line. Default: the spec's 10 s. */
  readonly receiverTimeoutMs?: number;
  /** The capability's clock (secret rotation overlaps, signature timestamps, attempt times). Default: the system clock. */
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
  readonly delivery?: WebhookDeliveryOptions;
}

export interface WebhooksWiring {
  readonly webhooks: WebhookUseCases;
  /** Events other internal services publish (the EventsService). */
  readonly publisher: WebhookEventPublisher;
  /** The outbox relay: started beside a worker (worker.ts), close() on shutdown (before the Temporal client). */
  readonly dispatcher: WebhookDeliveryDispatcher;
  /** The live event streams of `mailctl listen` and the test events of `mailctl trigger` (served by API processes). */
  readonly live: LiveEvents;
  /** Ends the open live streams (reason `shutdown`) and refuses new ones: before the servers close, which wait for them. */
  endStreams(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Where deliveries may go: the SSRF rules with the process's resolver.
 * Throws for `allowLoopback` in production mode.
 */
export function webhookTargetPolicy(config: Pick<Config, "mode" | "webhookDnsTimeoutMs">, options: WebhookDeliveryOptions = {}): WebhookTargetPolicy {
  if (options.allowLoopback && config.mode === "production") {
    throw new Error("webhook deliveries to loopback addresses are refused in production mode (WebhookDeliveryOptions.allowLoopback)");
  }
  const { nameservers } = options;
  return new WebhookTargetPolicy({
    // Asynchronous DNS with its own deadline, never the thread pool's getaddrinfo.
    resolver: options.resolver ?? dnsHostResolver({ timeoutMs: config.webhookDnsTimeoutMs, ...(nameservers !== undefined ? { servers: nameservers } : {}) }),
    allowLoopback: options.allowLoopback ?? false,
    resolveTimeoutMs: config.webhookDnsTimeoutMs,
  });
}

export function createWebhooksWiring(deps: WebhooksDependencies): WebhooksWiring {
  const { config } = deps;
  const o = deps.delivery ?? {};
  const policy = webhookTargetPolicy(config, o);
  const stores = postgresWebhookStores(deps.orm);
  const transport = new HttpsWebhookSender({
    policy,
    timeoutMs: o.receiverTimeoutMs ?? RECEIVER_TIMEOUT_MS,
    ...(o.trustedCa !== undefined ? { trustedCa: o.trustedCa } : {}),
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
  // Connects only while this process holds a stream (a worker never does).
  const feed = new PostgresLiveEventFeed({ db: poolOf(deps.orm), log: deps.log });
  return {
    webhooks,
    publisher: new WebhookEventPublisher({ recorder: stores.publishedEvents, nudge: () => dispatcher.kick() }),
    dispatcher,
    live: new LiveEvents({ feed, recorder: stores.testEvents, ...(o.clock ? { clock: o.clock } : {}) }),
    endStreams: () => feed.close(),
    async close() {
      await feed.close();
      await dispatcher.close();
    },
  };
}
