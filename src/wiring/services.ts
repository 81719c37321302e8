import { type Config, publicBaseUrlOf } from "../config.ts";
import { type Accounts, type AccountsOptions, createAccounts } from "./accounts.ts";
import type { Credits } from "../capabilities/credits/index.ts";
import { createCredits, lowCreditsByOwnerNotice } from "./credits.ts";
import type { IdempotencyGuard } from "../capabilities/idempotency/index.ts";
import { createIdempotency } from "./idempotency.ts";
import { createMessaging, type Messaging } from "./messaging.ts";
import type { FixedWindowRateLimiter } from "../capabilities/rate-limit/index.ts";
import { createRateLimiter } from "./rate-limit.ts";
import type { SendingSetup } from "../capabilities/sending-setup/index.ts";
import { createSendingSetup, domainDegradedByOwnerNotice } from "./sending-setup.ts";
import type { Suppressions } from "../capabilities/suppressions/index.ts";
import { createSuppressions } from "./suppressions.ts";
import { type MikroORM, migrate, openOrm } from "../adapters/postgres/orm.ts";
import { poolOf } from "../adapters/postgres/sql.ts";
import { createTemporalClient, type TemporalClient } from "../adapters/temporal/client.ts";
import { createDomainChecksStarter } from "../adapters/temporal/domains/dispatcher.ts";
import { type ContactsCapability, createContactsCapability } from "./contacts.ts";
import type { Conversions } from "../capabilities/conversions/index.ts";
import { createConversions } from "./conversions.ts";
import type { Tracking } from "../capabilities/tracking/index.ts";
import { createCopyDecorator, createTracking } from "./tracking.ts";
import type { SignupForms } from "../capabilities/forms/index.ts";
import type { StoreIntegrations } from "../capabilities/integrations/index.ts";
import { createFormsCapability } from "./forms.ts";
import { createIntegrationsCapability } from "./integrations.ts";
import { createWebhooksWiring, type WebhookDeliveryOptions, type WebhooksWiring } from "./webhooks.ts";
import { createMembersWiring, type MembersWiring } from "./members.ts";
import { createConfirmationMailer } from "./forms.ts";
import { createOwnerNotices } from "./owner-notices.ts";
import type { OwnerNotices } from "../capabilities/owner-notices/index.ts";
import { createSecretSealer, type SecretSealer } from "../capabilities/sending-setup/key-sealing.ts";
import type { SendingGuard } from "../capabilities/deliverability/index.ts";
import { createSendingGuard, guardWatcher, suspensionByOwnerNotice } from "./deliverability.ts";
import { type CampaignsWiring, createCampaignsWiring } from "./campaigns.ts";
import type { CampaignMessageDecorator } from "../capabilities/campaigns/ports.ts";

/**
 * What both kinds of process need, on an open, migrated database of their
 * own (each process, and each role in a process, has its own pool so a
 * burst of one never starves the other): the sending capabilities, the
 * shared Temporal client, and the messages capability on top of them.
 * The API process (api.ts) adds accounts, rate limits and idempotency; the
 * worker process (worker.ts) adds only the Temporal worker.
 */
export interface SendingCore {
  readonly orm: MikroORM;
  /** Sending domains, senders (checkSender, resolveSender) and templates (getTemplate). */
  readonly sendingSetup: SendingSetup;
  readonly credits: Credits;
  readonly suppressions: Suppressions;
  readonly messaging: Messaging;
  /** Webhook endpoints, deliveries, their outbox relay and activities. */
  readonly webhooks: WebhooksWiring;
  /** Contacts and their lists. */
  readonly contacts: ContactsCapability;
  /** The shared Temporal client (readiness asks it too). */
  readonly temporalClient: TemporalClient["client"];
  /** The process's sealer of stored secrets (DATA_ENCRYPTION_KEY[S]). */
  readonly sealer: SecretSealer;
  /** Emails to a company's owners (a domain degraded, credits low, sending suspended), as system mail. */
  readonly ownerNotices: OwnerNotices;
  /** The deliverability guard: suspends a company whose recent sends bounce or draw complaints too often. */
  readonly sendingGuard: SendingGuard;
  /** Campaigns: the use cases (API) and the sending steps (workers). */
  readonly campaigns: CampaignsWiring;
  close(): Promise<void>;
}

export interface ServiceLog {
  warn(details: Record<string, unknown>, message: string): void;
}

export interface CoreOptions {
  /** Largest number of pooled PostgreSQL connections of this core. */
  readonly poolMax: number;
  /** How webhook deliveries reach receivers (src/wiring/webhooks.ts); default: the spec's. */
  readonly webhookDelivery?: WebhookDeliveryOptions;
  /**
   * Whether this core hands messages to the email service (a worker's core,
   * the default). The API process's core does not, so it neither reads nor
   * reports the simulator's journal: that work stays with the workers.
   */
  readonly handsOffMessages?: boolean;
  /** Adds tracking and List-Unsubscribe to campaign copies (src/wiring/campaigns.ts); default: the plain decorator. */
  readonly campaignDecorator?: CampaignMessageDecorator;
}

export async function openSendingCore(databaseUrl: string, config: Config, log: ServiceLog, options: CoreOptions): Promise<SendingCore> {
  const orm = await openOrm(databaseUrl, {
    poolMax: options.poolMax,
    acquireTimeoutMs: config.databaseAcquireTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
  });
  try {
    await migrate(orm);
  } catch (error) {
    await orm.close();
    throw error;
  }
  // A sender or domain change made here reaches this process's cached sender
  // checks before it is answered (other processes hear it through NOTIFY);
  // (bound below, once messaging exists; nothing can change before).
  // One Temporal client per core, shared by every dispatcher; lazy, so the
  // API starts while Temporal is down.
  const temporal = createTemporalClient({
    address: config.temporalAddress ?? "127.0.0.1:7233",
    namespace: config.temporalNamespace,
    tls: config.temporalTls,
    apiKey: config.temporalApiKey,
  });
  let sendersChanged = (): void => {};
  // The owners' notices (low credits, a degraded domain) go through the send path, built below from these capabilities.
  let ownerNotices: OwnerNotices | undefined = undefined;
  const noticesOnceBuilt = (): OwnerNotices => {
    if (!ownerNotices) throw new Error("owner notices are not built yet");
    return ownerNotices;
  };
  const sendingSetup = createSendingSetup(orm, config, {
    onSendersChanged: () => sendersChanged(),
    degradedAlert: domainDegradedByOwnerNotice(noticesOnceBuilt, log),
    // Each domain's automatic re-checks (workflows/domains), started through this core's client.
    lifecycle: createDomainChecksStarter({ client: () => temporal.client, taskQueue: config.temporalTaskQueue, schedule: config.domainChecks, log }),
  });
  const sealer = createSecretSealer(config.dataEncryptionKey, config.dataEncryptionKeys);
  const credits = createCredits(orm, {
    config,
    lowCreditsAlert: lowCreditsByOwnerNotice(noticesOnceBuilt, log),
  });
  const sendingGuard = createSendingGuard(orm, { config, alert: suspensionByOwnerNotice(noticesOnceBuilt, log) });
  const suppressions = createSuppressions(orm, config);
  const contacts = createContactsCapability(orm, config);
  const messaging = createMessaging({
    temporal: temporal.client,
    db: poolOf(orm),
    config,
    credits,
    // A hard bounce or a complaint also moves the matching contact to
    // `bounced` / `complained` (spec: Contact status rules).
    suppressions: {
      isSuppressed: (query) => suppressions.isSuppressed(query),
      async suppress(command) {
        const added = await suppressions.suppress(command);
        await contacts.contacts.markFromSuppression({ companyId: command.companyId, email: command.email, reason: command.reason });
        return added;
      },
    },
    senders: sendingSetup.senders,
    templates: sendingSetup.templates,
    sealer,
    log,
    handsOffMessages: options.handsOffMessages ?? true,
    // Each bounce or complaint recorded: the guard judges the company's last 24 hours of sends.
    outcomeWatcher: guardWatcher(sendingGuard, log),
  });
  sendersChanged = () => messaging.sendersChanged();
  const notices = createOwnerNotices({ orm, config, messages: messaging.acceptance });
  ownerNotices = notices;
  const webhooks = createWebhooksWiring({
    orm,
    temporal: temporal.client,
    config,
    log,
    ...(options.webhookDelivery ? { delivery: options.webhookDelivery } : {}),
  });
  const campaigns = createCampaignsWiring({
    orm,
    config,
    temporal: temporal.client,
    messaging,
    senders: sendingSetup.senders,
    templates: sendingSetup.templates,
    sealer,
    log,
    // Every process that sends copies adds the tracked links, the pixel and List-Unsubscribe.
    decorator: options.campaignDecorator ?? createCopyDecorator(orm, config),
  });
  return {
    orm,
    campaigns,
    sendingSetup,
    credits,
    suppressions,
    messaging,
    webhooks,
    contacts,
    temporalClient: temporal.client,
    sealer,
    ownerNotices: notices,
    sendingGuard,
    async close() {
      await messaging.close();
      await webhooks.close();
      await temporal.close();
      await orm.close();
    },
  };
}

/** The capabilities of an API process. */
export interface Services extends SendingCore {
  readonly accounts: Accounts;
  readonly rateLimiter: FixedWindowRateLimiter;
  readonly idempotency: IdempotencyGuard;
  readonly conversions: Conversions;
  /** Campaign tracking and unsubscribe: the decorator of campaign copies, the /t and /u addresses, the engagement counts. */
  readonly tracking: Tracking;
  readonly forms: SignupForms;
  readonly integrations: StoreIntegrations;
  /** Company members, sign-in links and sessions, and the audit log. */
  readonly members: MembersWiring;
}

export async function openServices(
  databaseUrl: string,
  config: Config,
  log: ServiceLog,
  webhookDelivery?: WebhookDeliveryOptions,
  accountsOptions: AccountsOptions = {},
): Promise<Services> {
  const core = await openSendingCore(databaseUrl, config, log, {
    poolMax: config.apiPoolMax,
    handsOffMessages: false,
    ...(webhookDelivery ? { webhookDelivery } : {}),
  });
  const { orm } = core;
  const accounts = createAccounts(orm, config, accountsOptions);
  const rateLimiter = createRateLimiter(orm);
  const idempotency = createIdempotency(orm, config);
  const conversions = createConversions(orm, config);
  const forms = createFormsCapability(orm, { publicBaseUrl: publicBaseUrlOf(config) });
  const tracking = createTracking(orm, config, {
    contacts: core.contacts.contacts,
    publisher: core.webhooks.publisher,
    // Each campaign.click is also a click of the ledger conversions are attributed from.
    clicks: conversions,
    engagement: core.campaigns.engagement,
    rateLimiter,
  });
  const integrations = createIntegrationsCapability(orm, { contacts: core.contacts.contacts });
  const members = createMembersWiring({
    orm,
    config,
    rateLimiter,
    companies: accounts.companies,
    // Sign-in emails take the service's own send path, from SYSTEM_SENDER_COMPANY_ID's default sender.
    mailer: createConfirmationMailer(core.messaging.acceptance),
    log,
  });
  return {
    ...core,
    accounts,
    rateLimiter,
    idempotency,
    conversions,
    tracking,
    forms,
    integrations,
    members,
    async close() {
      await members.close();
      await accounts.close();
      await rateLimiter.close();
      await idempotency.close();
      await core.close();
    },
  };
}
