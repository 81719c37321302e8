import type { Client as TemporalWorkflowClient } from "@temporalio/client";
import type { Config } from "../config.ts";
import type { Pool } from "../adapters/postgres/sql.ts";
import { MessageDispatcher } from "../adapters/temporal/messages/dispatcher.ts";
import { postgresHandoffJournal } from "../adapters/postgres/messages/handoff-journal.ts";
import { listenForSenderChanges } from "../adapters/postgres/sending-setup/sender-changes.ts";
import { CachedSenderDirectory } from "../capabilities/messages/accept/cached-senders.ts";
import { createSimulatorProvider } from "../adapters/email/simulator.ts";
import { createSmtpProvider } from "../adapters/email/smtp-provider.ts";
import { sesProviderOf, verpReturnPath } from "./delivery-reports.ts";
import type { EmailProvider, ProviderEvent } from "../capabilities/messages/email-provider.ts";
import { MessageAcceptance } from "../capabilities/messages/accept/message-acceptance.ts";
import type { SenderDirectoryPort, TemplatesPort, WalletPort } from "../capabilities/messages/accept/ports.ts";
import { MessageLifecycle } from "../capabilities/messages/lifecycle/message-lifecycle.ts";
import { PostgresMessageStore } from "../adapters/postgres/messages/message-store.ts";
import type { SecretSealer } from "../capabilities/sending-setup/key-sealing.ts";
import { postgresMessageLog } from "../adapters/postgres/messages/message-log.ts";
import { postgresMessageContent } from "../adapters/postgres/messages/message-content.ts";
import { postgresSendingPaceStore } from "../adapters/postgres/messages/sending-pace-store.ts";
import type { CreditsPort, OutcomeWatcher, SigningKeysPort, SuppressionsPort } from "../capabilities/messages/lifecycle/ports.ts";
import { ProviderEventsIntake } from "../capabilities/messages/lifecycle/provider-events.ts";
import { SendingPace } from "../capabilities/messages/lifecycle/sending-pace.ts";
import { MessageLog } from "../capabilities/messages/read/index.ts";
import { MessageContentRetention } from "../capabilities/messages/lifecycle/content-retention.ts";
import { postgresContentRetention } from "../adapters/postgres/messages/content-retention.ts";

/**
 * The messages capability put together: accepting sends (the API's and the
 * service's own mail), the lifecycle the workflows drive, the
 * provider-events entry point, the message log, and the dispatcher that
 * starts workflows (with its outbox relay).
 */
/** How often an API process deletes the content of messages past the retention. */
const CONTENT_RETENTION_EVERY_MS = 3_600_000;

export interface MessagingDependencies {
  readonly db: () => Promise<Pool>;
  readonly config: Config;
  readonly credits: CreditsPort & WalletPort;
  readonly suppressions: SuppressionsPort;
  readonly senders: SenderDirectoryPort & SigningKeysPort;
  readonly templates: TemplatesPort;
  /** Seals and opens the bodies of the service's own mail (the process's one sealer). */
  readonly sealer: SecretSealer;
  /** The process's shared Temporal client (services.ts owns and closes it). */
  readonly temporal: TemporalWorkflowClient;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  /**
   * Whether this process hands messages off (runs the message activities).
   * Default true. False in the API process: its simulator then keeps no
   * journal, so it does not poll for due outcomes (the workers report them)
   * and the API's event loop stays with the requests; and, since it is the
   * process that accepts sends, it caches their sender checks.
   */
  readonly handsOffMessages?: boolean;
  /** Hears of each bounce and complaint recorded (the sending guard). */
  readonly outcomeWatcher?: OutcomeWatcher;
}

export interface Messaging {
  /** Accepts sends: POST /mail/v1/send and the service's own mail (sign-in links, confirmations). */
  readonly acceptance: MessageAcceptance;
  /** The message log and the content of a message as sent (GetMessageContent, for the administration screen). */
  readonly log: MessageLog;
  readonly lifecycle: MessageLifecycle;
  readonly dispatcher: MessageDispatcher;
  readonly providerEvents: ProviderEventsIntake;
  /** Deletes the content of messages past MESSAGE_CONTENT_RETENTION_DAYS (hourly in API processes). */
  readonly contentRetention: MessageContentRetention;
  readonly provider: EmailProvider;
  /** This process changed a sender or a domain: its cached sender checks (if any) forget what they read. */
  sendersChanged(): void;
  close(): Promise<void>;
}

function createProvider(deps: MessagingDependencies, onEvent: (event: ProviderEvent) => Promise<void>): EmailProvider {
  const { config } = deps;
  if (config.emailProvider === "ses") return sesProviderOf(config, smtpHandoffDeadlineMs(config.handoffTimeoutSeconds));
  if (config.emailProvider === "smtp") {
    // Each message's own VERP envelope sender, so its DSNs come back to the inbound listener.
    const returnPath = verpReturnPath(config);
    return createSmtpProvider({
      ...(returnPath ? { returnPath } : {}),
      host: config.smtp.host,
      port: config.smtp.port,
      secure: config.smtp.secure,
      requireTLS: config.smtp.requireTls ?? false,
      ...(config.smtp.user ? { auth: { user: config.smtp.user, pass: config.smtp.password ?? "" } } : {}),
      messageIdDomain: config.messageIdDomain,
      ...(config.smtp.ehloName ? { ehloName: config.smtp.ehloName } : {}),
      // Well inside one handoff attempt (HANDOFF_TIMEOUT_SECONDS): an attempt
      // must be over before Temporal gives up on it and starts the next one,
      // or both could deliver the message.
      timeouts: { handoffMs: smtpHandoffDeadlineMs(config.handoffTimeoutSeconds) },
    });
  }
  return createSimulatorProvider({
    onEvent,
    ...(deps.handsOffMessages === false ? {} : { journal: postgresHandoffJournal(deps.db) }),
    handoffDelayMs: config.simulatorHandoffDelayMs,
  });
}

/** Half the attempt's time, at most 30 s. */
export function smtpHandoffDeadlineMs(handoffTimeoutSeconds: number): number {
  return Math.min(30_000, Math.floor((handoffTimeoutSeconds * 1_000) / 2));
}

export function createMessaging(deps: MessagingDependencies): Messaging {
  const { config, db } = deps;
  const store = new PostgresMessageStore(db, { sealer: deps.sealer });
  // The provider reports outcomes through the intake, which needs the
  // lifecycle, which needs the provider: the late binding breaks the cycle.
  const late: { intake?: ProviderEventsIntake } = {};
  const provider = createProvider(deps, async (event) => {
    if (!late.intake) throw new Error("provider events arrived before the intake was ready");
    await late.intake.report(event);
  });
  const lifecycle = new MessageLifecycle({
    store,
    provider,
    credits: deps.credits,
    suppressions: deps.suppressions,
    signingKeys: deps.senders,
    pace: new SendingPace({ store: postgresSendingPaceStore(db), ratePerSecond: config.sendingRatePerSecond, burst: config.sendingBurst }),
  });
  const dispatcher = new MessageDispatcher({
    client: deps.temporal,
    taskQueue: config.temporalTaskQueue,
    store,
    provider: provider.name,
    handoffTimeoutSeconds: config.handoffTimeoutSeconds,
    relayIntervalMs: config.relayIntervalMs,
    log: deps.log,
  });
  const intake = new ProviderEventsIntake({ lifecycle, watcher: deps.outcomeWatcher });
  late.intake = intake;

  // The API process (it accepts sends, hands off nothing) reuses sender checks
  // for a few seconds, forgotten whenever a sender or domain changes
  // (CachedSenderDirectory); workers never accept sends.
  const acceptsSends = deps.handsOffMessages === false;
  const senderChecks = acceptsSends ? new CachedSenderDirectory(deps.senders) : undefined;
  const senderFeed = senderChecks
    ? listenForSenderChanges(db, {
        changed: () => senderChecks.invalidateAll(),
        listening: (on) => senderChecks.setEnabled(on),
        onError: (error) => deps.log.warn({ err: error }, "sender change feed: connection lost; sender checks are not cached meanwhile"),
      })
    : undefined;

  const acceptance = new MessageAcceptance({
    store,
    senders: senderChecks ?? deps.senders,
    templates: deps.templates,
    wallet: deps.credits,
    // Started soon, off the request's path; the relay picks up whatever this could not start.
    onAccepted: (message) => dispatcher.enqueue(message),
  });

  // The API processes delete expired content at start and then hourly, like the audit log's
  // housekeeping: idempotent, so a run missed or run twice (several processes) changes nothing.
  const contentRetention = new MessageContentRetention({ store: postgresContentRetention(db), retentionDays: config.messageContentRetentionDays });
  let retentionRun: Promise<unknown> = Promise.resolve();
  const removeExpiredContent = () => {
    retentionRun = contentRetention.removeExpired().catch((error: unknown) => deps.log.warn({ err: error }, "content retention failed; retried in an hour"));
  };
  const retentionTimer = acceptsSends ? setInterval(removeExpiredContent, CONTENT_RETENTION_EVERY_MS) : undefined;
  retentionTimer?.unref();
  if (acceptsSends) removeExpiredContent();

  return {
    acceptance,
    contentRetention,
    log: new MessageLog({ store: postgresMessageLog(db), contents: postgresMessageContent(db), cursorSecret: config.cursorSecret }),
    lifecycle,
    dispatcher,
    providerEvents: intake,
    provider,
    sendersChanged() {
      senderChecks?.invalidateAll();
    },
    async close() {
      clearInterval(retentionTimer);
      // A run under way finishes on the pool before the process lets it go.
      await retentionRun;
      await senderFeed?.close();
      await dispatcher.close();
      await provider.close();
    },
  };
}
