import { readFile } from "node:fs/promises";
import type { FastifyServerOptions } from "fastify";
import type { Config } from "../config.ts";
import { openServices, type ServiceLog, type Services } from "./services.ts";
import type { AccountsOptions } from "./accounts.ts";
import type { WorkerProcess } from "./worker.ts";
import type { WebhookDeliveryOptions } from "./webhooks.ts";
import { createDeliveryReports, type DeliveryReportsOptions } from "./delivery-reports.ts";
import { deliveryReportsServiceImpl } from "../transport/connect/delivery-reports/index.ts";
import { webhooksServiceImpl } from "../transport/connect/webhooks/index.ts";
import { listsServiceImpl } from "../transport/connect/contacts/index.ts";
import { signupFormsServiceImpl } from "../transport/connect/forms/index.ts";
import { reportsServiceImpl } from "../transport/connect/conversions/index.ts";
import { templatesServiceImpl } from "../transport/connect/templates/index.ts";
import { createTemplateTestSends } from "./sending-setup.ts";
import { integrationsServiceImpl } from "../transport/connect/integrations/index.ts";
import { createHostedForms } from "./forms.ts";
import { eventsServiceImpl } from "../transport/connect/events/index.ts";
import { classifyUnexpected, unavailableAs503 } from "./unavailable.ts";
import { adminServiceImpl } from "../transport/connect/admin/index.ts";
import { apiErrorFrom } from "../contract/api-error.ts";
import { sessionServiceImpl } from "../transport/connect/sessions/index.ts";
import { membersServiceImpl } from "../transport/connect/members/index.ts";
import { suppressionsServiceImpl } from "../transport/connect/suppressions/index.ts";
import { campaignsServiceImpl } from "../transport/connect/campaigns/index.ts";
import { creditsServiceImpl } from "../transport/connect/credits/index.ts";
import { sendingStatusServiceImpl } from "../transport/connect/sending-status/index.ts";
import { domainsServiceImpl, sendersServiceImpl } from "../transport/connect/domains/index.ts";
import { statsServiceImpl } from "../transport/connect/stats/index.ts";
import { createMailStatistics, createStatsFoldLoop } from "./stats.ts";
import { apiKeysServiceImpl } from "../transport/connect/api-keys/index.ts";
import { auditServiceImpl } from "../transport/connect/audit/index.ts";
import { messageContentServiceImpl } from "../transport/connect/mail/message-content.ts";
import { type ApiServers, buildApiServers } from "../transport/server.ts";
import { readinessOf, untilStarted } from "../transport/http/health.ts";
import { inFlightRequests } from "../transport/http/in-flight.ts";
import { createMetrics } from "../transport/metrics/registry.ts";
import { postgresGauges } from "../adapters/metrics/postgres-gauges.ts";
import { postgresProbe, temporalProbe } from "../adapters/metrics/readiness-probes.ts";
import { poolOf } from "../adapters/postgres/sql.ts";

/** Each readiness check's longest wait: a probe answers well before an orchestrator's own timeout. */
const READINESS_TIMEOUT_MS = 2000;

/**
 * The composition root of one API process: the domain services, the
 * servers, the message outbox relay and (unless RUN_WORKER=false) the
 * Temporal worker, with the webhook relay beside it. `npm start`
 * (src/main.ts) and the tests both build the service through here, so what
 * is tested is what runs.
 */
export interface App extends Omit<Services, "close"> {
  readonly config: Config;
  readonly servers: ApiServers;
  /** Bound URLs once listening. */
  readonly httpUrl: string;
  readonly grpcUrl: string;
  /** The operator listener: AdminService, EventsService, /metrics (HTTP/1.1 and h2c). */
  readonly operatorUrl: string;
  /** The inbound SMTP listener's port (delivery reports), when INBOUND_SMTP_ENABLED. */
  readonly inboundSmtpPort?: number;
  /** Requests being answered now, and the in-process worker's activities under way (graceful shutdown reports them). */
  inFlight(): Record<string, number>;
  close(): Promise<void>;
}

export interface StartAppOptions {
  readonly config: Config;
  /** Overrides config.databaseUrl (which may be unset when embedded PostgreSQL is used). */
  readonly databaseUrl?: string;
  readonly logger?: FastifyServerOptions["logger"];
  /** How webhook deliveries reach receivers (src/wiring/webhooks.ts); default: the spec's. */
  readonly webhookDelivery?: WebhookDeliveryOptions;
  /** The delivery loop's settings passed in code (the HTTPS agent SNS is reached through). */
  readonly deliveryReports?: DeliveryReportsOptions;
  /**
   * The last step of start-up, once everything else runs and before
   * /readyz says ready (npm start's demo data). When it throws, the app is
   * closed and startApp rejects with its error.
   */
  readonly beforeReady?: (app: App) => Promise<void>;
  /** Settings of the accounts capability (its clock, the key lookup cache); the defaults are the system clock and 10 s. */
  readonly accounts?: AccountsOptions;
}

export async function startApp(options: StartAppOptions): Promise<App> {
  const { config } = options;
  const databaseUrl = options.databaseUrl ?? config.databaseUrl;
  if (!databaseUrl) throw new Error("no database URL: set DATABASE_URL");
  // The operator listener's certificate and key, read at start: a missing file stops the process before it opens anything.
  const operatorTls = config.operatorTls
    ? { cert: await readFile(config.operatorTls.certPath), key: await readFile(config.operatorTls.keyPath) }
    : undefined;

  // The servers' logger, once they exist (the services are built before them).
  const built: { servers?: ApiServers } = {};
  const log: ServiceLog = {
    warn: (details, message) => (built.servers ? built.servers.http.log.warn(details, message) : console.warn(message, details)),
  };
  const services = await openServices(databaseUrl, config, log, options.webhookDelivery, options.accounts);
  const { accounts, sendingSetup, credits, suppressions, messaging } = services;
  // DSN / ARF reports (inbound SMTP) and SES notifications, into the provider events intake.
  const deliveryReports = createDeliveryReports({
    config,
    orm: services.orm,
    providerEvents: messaging.providerEvents,
    log,
    options: options.deliveryReports,
    // Mail to a campaign copy's List-Unsubscribe mailto arrives at the same listener.
    unsubscribes: services.tracking,
  });
  const pool = poolOf(services.orm);
  // Not ready while the rest starts below: the listeners answer first (liveness, and 503 meanwhile).
  const startup = untilStarted(
    readinessOf({ postgres: postgresProbe(pool), temporal: temporalProbe(services.temporalClient) }, READINESS_TIMEOUT_MS),
  );
  const metrics = createMetrics(postgresGauges(pool, config.apiPoolMax), (error) =>
    log.warn({ err: error }, "a metrics gauge could not be read"),
  );
  const servers = await buildApiServers({
    config,
    ...(operatorTls ? { operatorTls } : {}),
    // Both run before any handler (and before the errors interceptor on the
    // REST bridge): a saturated database must answer 503 there as well.
    authenticator: unavailableAs503(accounts.authenticator),
    rateLimiter: unavailableAs503(services.rateLimiter),
    idempotency: services.idempotency,
    adminService: adminServiceImpl({
      companies: accounts.companies,
      members: services.members.members,
      sendingSetup,
      credits,
      messaging,
      sendingGuard: services.sendingGuard,
    }),
    mail: {
      acceptance: messaging.acceptance,
      messages: messaging.log,
      contacts: services.contacts.contacts,
      conversions: services.conversions,
      forms: services.forms,
      credits,
    },
    // The administration screen's message preview (member sessions and operators; API keys refused).
    messageContentService: messageContentServiceImpl(messaging.log),
    integrationsService: integrationsServiceImpl(services.integrations),
    signupFormsService: signupFormsServiceImpl(services.forms),
    reportsService: reportsServiceImpl(services.conversions),
    templatesService: templatesServiceImpl({
      templates: sendingSetup.templates,
      testSends: createTemplateTestSends(services.orm, sendingSetup.templates, messaging.acceptance),
    }),
    suppressionsService: suppressionsServiceImpl(suppressions),
    campaignsService: campaignsServiceImpl(services.campaigns.campaigns),
    creditsService: creditsServiceImpl(credits),
    sendingStatusService: sendingStatusServiceImpl(services.sendingGuard),
    domainsService: domainsServiceImpl(sendingSetup),
    sendersService: sendersServiceImpl(sendingSetup),
    statsService: statsServiceImpl(createMailStatistics(services.orm)),
    // The sign-up pages and their double opt-in (confirmation emails through the normal send path).
    ...(deliveryReports.sesNotifications ? { sesNotifications: deliveryReports.sesNotifications } : {}),
    deliveryReportsService: deliveryReportsServiceImpl(deliveryReports.reports),
    hostedForms: createHostedForms({
      orm: services.orm,
      forms: services.forms,
      contacts: services.contacts.contacts,
      rateLimiter: services.rateLimiter,
      // Their own keys (FORM_TOKEN_SECRET, CONFIRMATION_SECRET): rotating the pepper or the cursor key expires no page or link.
      tokenSecret: config.formTokenSecret,
      confirmationSecret: config.confirmationSecret,
      ...(config.signupLimits ? { limits: config.signupLimits } : {}),
      ...(config.confirmationsPerCompanyPerHour === undefined ? {} : { confirmationsPerCompanyPerHour: config.confirmationsPerCompanyPerHour }),
      messages: messaging.acceptance,
      log,
    }),
    listsService: listsServiceImpl(services.contacts.lists),
    // Campaign tracking and unsubscribe: the anonymous doors /t/c, /t/o and /u.
    tracking: { tracking: unavailableAs503(services.tracking), log },
    classifyUnexpected,
    webhooksService: webhooksServiceImpl({
      endpoints: services.webhooks.webhooks.endpoints,
      deliveries: services.webhooks.webhooks.deliveries,
      testEvents: services.webhooks.webhooks.testEvents,
      live: services.webhooks.live,
      log,
    }),
    // Each campaign.click is also a click of the ledger conversions are attributed from.
    eventsService: eventsServiceImpl({ publisher: services.webhooks.publisher, clicks: services.conversions }),
    // Members, sign-in and the audit log: the session door and the company's people services.
    people: {
      sessionService: sessionServiceImpl({
        sessions: services.members.sessions,
        members: services.members.members,
        allowedOrigins: services.members.allowedOrigins,
      }),
      membersService: membersServiceImpl(services.members.members),
      apiKeysService: apiKeysServiceImpl(accounts.keys),
      auditService: auditServiceImpl(services.members.audit),
      sessions: unavailableAs503(services.members.sessions),
      companies: async (companyId) => {
        const company = await accounts.companies.get({ companyId }).catch((error: unknown) => {
          if (apiErrorFrom(error)?.code === "NOT_FOUND") return undefined;
          throw error;
        });
        return company && { id: company.id, name: company.name, entitlements: company.entitlements };
      },
      allowedOrigins: services.members.allowedOrigins,
    },
    readiness: startup.readiness,
    metrics,
    ...(options.logger !== undefined ? { logger: options.logger } : {}),
  });
  built.servers = servers;
  const requestsInFlight = inFlightRequests([servers.http.server, servers.h2c.server, servers.operatorHttp.server, servers.operatorH2c.server]);
  const { httpUrl, grpcUrl, operatorUrl } = await servers.listen();
  const inboundSmtpPort = await deliveryReports.start();
  messaging.dispatcher.startRelay();
  const statsFold = createStatsFoldLoop(services.orm, log);
  statsFold.start();
  // The worker in this process has its own pool, and runs the webhook relay (worker.ts). Loaded
  // only here: an API process with RUN_WORKER=false never loads the Temporal worker SDK (memory).
  const worker: WorkerProcess | undefined =
    config.runWorker && config.temporalAddress
      ? await (await import("./worker.ts")).startWorkerProcess(config, databaseUrl, log, options.webhookDelivery ? { webhookDelivery: options.webhookDelivery } : {})
      : undefined;

  let closed: Promise<void> | undefined;
  const app: App = {
    ...services,
    config,
    servers,
    httpUrl,
    grpcUrl,
    operatorUrl,
    ...(inboundSmtpPort !== undefined ? { inboundSmtpPort } : {}),
    inFlight: () => ({ requests: requestsInFlight(), ...(worker ? { activities: worker.status().activitiesInFlight } : {}) }),
    close() {
      closed ??= (async () => {
        // Open event streams end first, each told why: the servers' close waits for every answer.
        await services.webhooks.endStreams();
        await servers.close();
        await deliveryReports.close();
        await worker?.stop();
        await statsFold.close();
        await services.close();
      })();
      return closed;
    },
  };
  if (options.beforeReady) {
    try {
      await options.beforeReady(app);
    } catch (error) {
      await app.close();
      throw error;
    }
  }
  startup.finished();
  return app;
}
