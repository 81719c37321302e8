import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config.ts";
import { openServices, type ServiceLog, type Services } from "./services.ts";
import { startWorkerProcess, type WorkerProcess } from "./worker.ts";
import type { WebhooksTestOverrides } from "./webhooks.ts";
import { webhooksServiceImpl } from "../transport/connect/webhooks/index.ts";
import { listsServiceImpl } from "../transport/connect/contacts/index.ts";
import { signupFormsServiceImpl } from "../transport/connect/forms/index.ts";
import { reportsServiceImpl } from "../transport/connect/conversions/index.ts";
import { integrationsServiceImpl } from "../transport/connect/integrations/index.ts";
import { createHostedForms } from "./forms.ts";
import { createHmac } from "node:crypto";
import { eventsServiceImpl } from "../transport/connect/events/index.ts";
import { classifyUnexpected, unavailableAs503 } from "./unavailable.ts";
import { adminServiceImpl } from "../transport/connect/admin/index.ts";
import { type ApiServers, buildApiServers } from "../transport/server.ts";
import { readinessOf } from "../transport/http/health.ts";
import { inFlightRequests } from "../transport/http/in-flight.ts";
import { createMetrics } from "../transport/metrics/registry.ts";
import { postgresGauges } from "../adapters/metrics/postgres-gauges.ts";
import { postgresProbe, temporalProbe } from "../adapters/metrics/readiness-probes.ts";
import { poolOf } from "../adapters/postgres/sql.ts";

/** Each readiness check's longest wait: a probe answers well before an orchestrator's own timeout. */
const READINESS_TIMEOUT_MS = 2000;

/**
 * The composition root of one API process: the domain services, the
 * servers, the outbox relay and (unless RUN_WORKER=false) the Temporal
 * worker. `npm start` (src/main.ts) and the tests both build the service
 * through here, so what is tested is what runs.
 */
export interface App extends Omit<Services, "close"> {
  readonly config: Config;
  readonly servers: ApiServers;
  /** Bound URLs once listening. */
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** The operator listener: AdminService, EventsService, /metrics (HTTP/1.1 and h2c). */
  readonly operatorUrl: string;
  /** Requests being answered now, and the in-process worker's activities under way (graceful shutdown reports them). */
  inFlight(): Record<string, number>;
  close(): Promise<void>;
}

export interface StartAppOptions {
  readonly config: Config;
  /** Overrides config.databaseUrl (which may be unset when embedded PostgreSQL is used). */
  readonly databaseUrl?: string;
  readonly logger?: FastifyServerOptions["logger"];
  /** Test-only webhook settings (loopback receivers, short schedules); never from the environment. */
  readonly webhooksTestOverrides?: WebhooksTestOverrides;
}

export async function startApp(options: StartAppOptions): Promise<App> {
  const { config } = options;
  const databaseUrl = options.databaseUrl ?? config.databaseUrl;
  if (!databaseUrl) throw new Error("no database URL: set DATABASE_URL");

  // The servers' logger, once they exist (the services are built before them).
  const built: { servers?: ApiServers } = {};
  const log: ServiceLog = {
    warn: (details, message) => (built.servers ? built.servers.http.log.warn(details, message) : console.warn(message, details)),
  };
  const services = await openServices(databaseUrl, config, log, options.webhooksTestOverrides);
  const { accounts, sendingSetup, credits, suppressions, messaging } = services;
  const pool = poolOf(services.orm);
  const readiness = readinessOf({ postgres: postgresProbe(pool), temporal: temporalProbe(services.temporalClient) }, READINESS_TIMEOUT_MS);
  const metrics = createMetrics(postgresGauges(pool, config.apiPoolMax), (error) =>
    log.warn({ err: error }, "a metrics gauge could not be read"),
  );
  const servers = await buildApiServers({
    config,
    // Both run before any handler (and before the errors interceptor on the
    // REST bridge): a saturated database must answer 503 there as well.
    authenticator: unavailableAs503(accounts.authenticator),
    rateLimiter: unavailableAs503(services.rateLimiter),
    idempotency: services.idempotency,
    adminService: adminServiceImpl({
      accounts: accounts.service,
      sendingSetup,
      credits,
      suppressions,
      messaging,
      webhooks: services.webhooks.webhooks,
      forms: services.forms,
      contactLists: services.contacts.lists,
      revenue: services.conversions,
    }),
    mail: { acceptSend: messaging.acceptSend, messages: messaging.reader, contacts: services.contacts.contacts, conversions: services.conversions, forms: services.forms },
    integrationsService: integrationsServiceImpl(services.integrations),
    signupFormsService: signupFormsServiceImpl(services.forms),
    reportsService: reportsServiceImpl(services.conversions),
    // The sign-up pages and their double opt-in (confirmation emails through the normal send path).
    hostedForms: createHostedForms({
      orm: services.orm,
      forms: services.forms,
      contacts: services.contacts.contacts,
      rateLimiter: services.rateLimiter,
      // Its own key, derived from the cursor secret (domain-separated): no new secret to manage.
      tokenSecret: createHmac("sha256", config.cursorSecret).update("mail.v1.hosted-form-token").digest("hex"),
      sending: { senders: sendingSetup.senders, templates: sendingSetup.templates, wallet: credits, dispatcher: messaging.dispatcher },
      log,
    }),
    listsService: listsServiceImpl(services.contacts.lists),
    classifyUnexpected,
    webhooksService: webhooksServiceImpl({
      endpoints: services.webhooks.webhooks.endpoints,
      deliveries: services.webhooks.webhooks.deliveries,
    }),
    // Each campaign.click is also a click of the ledger conversions are attributed from.
    eventsService: eventsServiceImpl({ publisher: services.webhooks.publisher, clicks: services.conversions }),
    readiness,
    metrics,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  built.servers = servers;
  const requestsInFlight = inFlightRequests([servers.http.server, servers.h2c.server, servers.operatorHttp.server, servers.operatorH2c.server]);
  const { httpUrl, grpcUrl, operatorUrl } = await servers.listen();
  messaging.dispatcher.startRelay();
  services.webhooks.dispatcher.startRelay();
  // The worker in this process has its own pool (worker.ts).
  const worker: WorkerProcess | undefined =
    config.runWorker && config.temporalAddress ? await startWorkerProcess(config, databaseUrl, log, options.webhooksTestOverrides) : undefined;

  let closed: Promise<void> | undefined;
  return {
    ...services,
    config,
    servers,
    httpUrl,
    grpcUrl,
    operatorUrl,
    inFlight: () => ({ requests: requestsInFlight(), ...(worker ? { activities: worker.status().activitiesInFlight } : {}) }),
    close() {
      closed ??= (async () => {
        await servers.close();
        await worker?.stop();
        await services.close();
      })();
      return closed;
    },
  };
}
