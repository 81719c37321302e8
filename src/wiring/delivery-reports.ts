import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Agent } from "node:https";
import type { Config } from "../config.ts";
import type { MikroORM } from "@mikro-orm/postgresql";
import { createSesProvider } from "../adapters/email/ses-provider.ts";
import { postgresDeliveryReportStore } from "../adapters/postgres/delivery-reports/report-store.ts";
import { DeliveryReports } from "../capabilities/delivery-reports/receive-reports.ts";
import type { ProviderEventsPort } from "../capabilities/delivery-reports/ports.ts";
import { VerpAddresses } from "../capabilities/delivery-reports/verp.ts";
import type { EmailProvider, OutgoingEmail } from "../capabilities/messages/email-provider.ts";
import { returnPathDomainFor } from "../capabilities/sending-setup/dns-records.ts";
import type { InboundSmtpDependencies, InboundSmtpListener } from "../transport/inbound-smtp/listener.ts";
import type { SesNotificationsDependencies } from "../transport/http/ses-notifications.ts";

/**
 * The delivery loop put together (docs/delivery-loop.md): VERP return paths
 * for the SMTP provider, the SES provider, and in the API process the
 * inbound SMTP listener and the SES notifications route, both feeding the
 * provider events intake.
 */

/** Settings of the delivery loop passed in code by whoever starts the API (startApp). */
export interface DeliveryReportsOptions {
  /**
   * The HTTPS agent SNS is reached through: the certificates that sign its
   * notifications and the subscription confirmations (an egress proxy, a
   * trust store or a resolver of its own). Unset: Node's global agent.
   */
  readonly snsAgent?: Agent | undefined;
}

const DEFAULT_SETTINGS: NonNullable<Config["deliveryReports"]> = {
  verpSecret: "",
  inboundSmtp: {
    enabled: false,
    host: "127.0.0.1",
    port: 0,
    tlsCertFile: undefined,
    tlsKeyFile: undefined,
    maxMessageBytes: 1024 * 1024,
    maxConnections: 50,
    messagesPerMinute: 120,
  },
  ses: { region: "us-east-1", configurationSet: undefined, endpoint: undefined, snsTopicArn: undefined },
};

function settingsOf(config: Config): NonNullable<Config["deliveryReports"]> {
  return config.deliveryReports ?? DEFAULT_SETTINGS;
}

function verpOf(config: Config): VerpAddresses | undefined {
  const secret = settingsOf(config).verpSecret;
  return secret ? new VerpAddresses(secret) : undefined;
}

/**
 * The SMTP provider's envelope sender: the message's VERP address on the
 * return-path domain of its sender's domain (`bounces.<domain>`), when the
 * message is DKIM-signed for a verified domain; else undefined (From).
 */
export function verpReturnPath(config: Config): ((email: OutgoingEmail) => string | undefined) | undefined {
  const verp = verpOf(config);
  if (!verp) return undefined;
  return (email) => (email.dkim ? verp.addressFor(email.messageId, returnPathDomainFor(email.dkim.domainName)) : undefined);
}

/** EMAIL_PROVIDER=ses. */
export function sesProviderOf(config: Config, handoffMs: number): EmailProvider {
  const { ses } = settingsOf(config);
  return createSesProvider({
    region: ses.region,
    messageIdDomain: config.messageIdDomain,
    handoffMs,
    ...(ses.configurationSet ? { configurationSetName: ses.configurationSet } : {}),
    ...(ses.endpoint ? { endpoint: ses.endpoint } : {}),
  });
}

export interface DeliveryReportsWiring {
  readonly reports: DeliveryReports;
  /** For buildApiServers: the SES notifications route (served when EMAIL_PROVIDER=ses). */
  readonly sesNotifications?: SesNotificationsDependencies;
  /** Starts the inbound SMTP listener when enabled; resolves its port. */
  start(): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface DeliveryReportsDeps {
  readonly config: Config;
  readonly orm: MikroORM;
  readonly providerEvents: ProviderEventsPort;
  readonly log: { warn(details: Record<string, unknown>, message: string): void };
  readonly options?: DeliveryReportsOptions | undefined;
  /** Campaign copies' List-Unsubscribe mailto addresses, taken by the inbound listener too. */
  readonly unsubscribes?: InboundSmtpDependencies["unsubscribes"];
}

export function createDeliveryReports(deps: DeliveryReportsDeps): DeliveryReportsWiring {
  const settings = settingsOf(deps.config);
  const verp = verpOf(deps.config) ?? new VerpAddresses(randomBytes(32).toString("hex"));
  const reports = new DeliveryReports({
    verp,
    store: postgresDeliveryReportStore(deps.orm),
    providerEvents: deps.providerEvents,
  });
  const inbound = settings.inboundSmtp;
  let listener: InboundSmtpListener | undefined;
  const sesNotifications: SesNotificationsDependencies | undefined =
    deps.config.emailProvider === "ses"
      ? {
          reports,
          region: settings.ses.region,
          log: deps.log,
          ...(settings.ses.snsTopicArn ? { topicArn: settings.ses.snsTopicArn } : {}),
          agent: deps.options?.snsAgent,
        }
      : undefined;
  return {
    reports,
    ...(sesNotifications ? { sesNotifications } : {}),
    async start() {
      if (!inbound.enabled) return undefined;
      const tls =
        inbound.tlsCertFile && inbound.tlsKeyFile
          ? { cert: readFileSync(inbound.tlsCertFile), key: readFileSync(inbound.tlsKeyFile) }
          : undefined;
      // The SMTP server and the MIME reader are loaded only when the listener is on (memory).
      const [{ createInboundSmtpListener }, { parseInboundReport }] = await Promise.all([
        import("../transport/inbound-smtp/listener.ts"),
        import("../adapters/email/report-parser.ts"),
      ]);
      listener = createInboundSmtpListener(
        {
          host: inbound.host,
          port: inbound.port,
          hostname: deps.config.returnPathMxHost,
          ...(tls ? { tls } : {}),
          maxMessageBytes: inbound.maxMessageBytes,
          maxConnections: inbound.maxConnections,
          messagesPerMinute: inbound.messagesPerMinute,
        },
        { reports, parse: parseInboundReport, log: deps.log, ...(deps.unsubscribes ? { unsubscribes: deps.unsubscribes } : {}) },
      );
      return listener.listen();
    },
    async close() {
      await listener?.close();
    },
  };
}
