/**
 * Service configuration, from the environment, in one of two modes:
 *
 * - development (the default; `npm start`): every setting has a default that
 *   works on a developer machine, development secrets included, operators
 *   may override domain verification, and `npm start` seeds a demo company.
 * - production (`NODE_ENV=production` or `MAIL_MODE=production`): the same
 *   defaults for tuning, but no embedded servers, no development secrets, no
 *   verification override, no clear-text SMTP credentials; loadConfig
 *   refuses to start with one line per problem (src/config/production-rules.ts).
 *
 * Every variable is parsed once, here, by src/config/env-schema.ts, which
 * also documents each one; docs/configuration.md is generated from it.
 */
import { createHash } from "node:crypto";
import { DEVELOPMENT_SECRETS, productionProblems } from "./config/production-rules.ts";
import { ENV_SCHEMA, envProblems, type TrustProxy } from "./config/env-schema.ts";
import {
  type OperatorTlsSettings,
  operatorTlsOf,
  operatorTlsProblems,
  type TemporalTlsSettings,
  temporalTlsOf,
  temporalTlsProblems,
} from "./config/combination-rules.ts";
import type { SealingKey } from "./capabilities/sending-setup/key-sealing.ts";

export type { OperatorTlsSettings, TemporalTlsSettings } from "./config/combination-rules.ts";
export type { TrustProxy } from "./config/env-schema.ts";

export { CONFIG_VARIABLES, DEVELOPMENT_ONLY_VARIABLES } from "./config/env-schema.ts";

export type Mode = "development" | "production";

export interface Config {
  /** development or production, see above. */
  readonly mode: Mode;
  /** PostgreSQL URL. Unset: `npm start` runs an embedded PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** Temporal frontend host:port. Unset: `npm start` runs a Temporal dev server. */
  readonly temporalAddress: string | undefined;
  readonly temporalNamespace: string;
  readonly temporalTaskQueue: string;
  /** TLS towards Temporal (a cluster with TLS, Temporal Cloud); undefined: plaintext. */
  readonly temporalTls: TemporalTlsSettings | undefined;
  /** Temporal Cloud API key (secret), sent as a bearer token over TLS. */
  readonly temporalApiKey: string | undefined;
  /** host:port where the Temporal SDK's Prometheus exporter listens in a process that runs a worker; undefined: off. */
  readonly temporalMetricsAddress: string | undefined;
  /** Interface the servers listen on. */
  readonly host: string;
  /** HTTP/1.1 port: JSON /mail/v1 routes, Connect, gRPC-Web, OpenAPI. */
  readonly httpPort: number;
  /** Cleartext HTTP/2 (h2c) port: gRPC and Connect. */
  readonly grpcPort: number;
  /** Interface of the operator listener (AdminService, EventsService, /metrics); loopback by default. */
  readonly operatorHost: string;
  /** Port of the operator listener: HTTP/1.1 and h2c on one port. */
  readonly operatorPort: number;
  /**
   * TLS of the operator listener (OPERATOR_TLS_CERT_PATH, OPERATOR_TLS_KEY_PATH);
   * undefined: plain, and production keeps OPERATOR_HOST on loopback.
   * Optional so that hand-built test configs stay valid.
   */
  readonly operatorTls?: OperatorTlsSettings | undefined;
  /** Interface and port of a worker process's own listener (/livez, /readyz, /metrics); loopback by default. */
  readonly workerOperatorHost: string;
  readonly workerOperatorPort: number;
  /**
   * Which proxies in front of the public listeners may tell the client's
   * address (X-Forwarded-For): the failed-authentication limit and the
   * hosted forms' evidence use it. false: none, the peer is the client.
   */
  readonly trustProxy: TrustProxy;
  /**
   * SIGTERM: how long requests and activities in flight may take to finish;
   * then the process exits anyway (a worker's activities are cancelled
   * shortly before, so Temporal retries them elsewhere).
   */
  readonly shutdownTimeoutMs: number;
  /**
   * Bearer token of the AdminService. Unset: the AdminService refuses every
   * call (`npm start` in development makes one per run; production refuses
   * to start without one).
   */
  readonly operatorToken: string | undefined;
  /** Secret mixed into API key hashes (HMAC key). Unset in development: a public development value. */
  readonly apiKeyPepper: string;
  /** The three-letter service prefix of API keys. */
  readonly apiKeyPrefix: string;
  /** Requests per minute per API key (default for every operation). */
  readonly requestsPerMinute: number;
  readonly idempotencyWindowHours: number;
  /**
   * How long an unanswered idempotency claim holds its key, in seconds: the
   * request deadline (30 s on the JSON routes) plus a margin. A request that
   * dies before answering (crash, database outage) locks its key this long.
   */
  readonly idempotencyLeaseSeconds: number;
  readonly keyRotationGraceHours: number;
  /** Largest accepted request body, in bytes; larger answers 413 PAYLOAD_TOO_LARGE. */
  readonly maxBodyBytes: number;
  /** Days after which a message's html, text and attachments are deleted (MESSAGE_CONTENT_RETENTION_DAYS). */
  readonly messageContentRetentionDays: number;
  /** How often "last used" of API keys is written, in milliseconds. */
  readonly keyUsageFlushMs: number;
  readonly logLevel: string;
  /**
   * The legacy data encryption key (DATA_ENCRYPTION_KEY): opens values sealed
   * without a key id, and seals when no key with an id is set. Stored
   * secrets (DKIM private keys, webhook secrets) are sealed with AES-256-GCM
   * under keys derived by HKDF-SHA256. Unset in development: a public
   * development value; in production it may be left unset once every value
   * is sealed under DATA_ENCRYPTION_KEYS.
   */
  readonly dataEncryptionKey: string | undefined;
  /**
   * Data encryption keys with ids (DATA_ENCRYPTION_KEYS, `k2:…,k1:…`): the
   * first seals, every one opens what it sealed (docs/operations.md, "Rotating keys").
   */
  readonly dataEncryptionKeys: readonly SealingKey[];
  /** The SPF include that covers our sending servers (`include:<spfInclude>`). */
  readonly spfInclude: string;
  /** Host the MX of each custom MAIL FROM (return-path) domain points at: where bounces arrive. */
  readonly returnPathMxHost: string;
  /** DNS servers for domain verification (`ip` or `ip:port`); empty: the system's resolvers. */
  readonly dnsServers: readonly string[];
  /**
   * Whether operators may mark a sending domain verified without DNS checks.
   * Default true in development, false in production, where true is refused.
   */
  readonly allowVerificationOverride: boolean;
  /**
   * Production only: EMAIL_PROVIDER=simulator is refused unless this is set
   * (a trial deployment that must not send); every start then warns.
   */
  readonly allowSimulatorInProduction: boolean;
  /** The email service: `simulator` (default, see docs/delivery-loop.md), `smtp` or `ses`. */
  readonly emailProvider: "simulator" | "smtp" | "ses";
  readonly smtp: {
    readonly host: string;
    readonly port: number;
    readonly secure: boolean;
    /**
     * With secure=false: refuse to send unless the server offers STARTTLS
     * (nodemailer `requireTLS`), instead of falling back to clear text.
     * Always set by loadConfig; optional so that hand-built test configs
     * written before it stay valid (unset: false).
     */
    readonly requireTls?: boolean;
    readonly user: string | undefined;
    readonly password: string | undefined;
    /** The name announced in EHLO; unset: the machine's hostname. Optional for hand-built test configs. */
    readonly ehloName?: string | undefined;
  };
  /** Domain of the Message-ID header of outgoing mail. */
  readonly messageIdDomain: string;
  /**
   * The delivery loop (docs/delivery-loop.md): VERP return paths, the
   * inbound SMTP listener for DSN / ARF reports, and SES. Always set by
   * loadConfig; optional so that hand-built test configs stay valid (unset:
   * no VERP, no inbound listener, SES in us-east-1).
   */
  readonly deliveryReports?: DeliveryReportsConfig;
  /** Sending pace shared by all workers: messages per second, and burst. */
  readonly sendingRatePerSecond: number;
  readonly sendingBurst: number;
  /** How long one handoff attempt may take before it is retried (by another worker). */
  readonly handoffTimeoutSeconds: number;
  /**
   * Key of the list cursors' signatures (CURSOR_SECRET). Like the two below,
   * its own secret, never derived from the API key pepper: rotating one
   * invalidates nothing signed by another. Unset in development: a public
   * development value; required in production.
   */
  readonly cursorSecret: string;
  /** Key of the hosted sign-up pages' form tokens (FORM_TOKEN_SECRET); changing it expires the pages open in browsers. */
  readonly formTokenSecret: string;
  /** Key of the double opt-in confirmation links (CONFIRMATION_SECRET); changing it expires the links already emailed. */
  readonly confirmationSecret: string;
  /** Run the Temporal worker in this process (`npm start` does). */
  readonly runWorker: boolean;
  /** Pooled PostgreSQL connections of the API role and of the worker role (each has its own pool). */
  readonly apiPoolMax: number;
  /** The public address of the API (hosted sign-up form URLs); default http://HOST:HTTP_PORT. */
  readonly publicBaseUrl: string | undefined;
  /** Base of campaign tracking addresses (TRACKING_BASE_URL); unset: the public base URL. */
  readonly trackingBaseUrl?: string | undefined;
  /** The company whose default sender emails members' sign-in links; unset: links are answered to the caller. */
  readonly systemSenderCompanyId?: string | undefined;
  /** Below this balance a company's credits are low (the screen's banner, the owners' email); 0: never. */
  readonly lowCreditsThreshold: number;
  /** The sending guard (docs/deliverability.md): bounce and complaint rates, in percent, that suspend a company's sending, and the fewest sends of the window it judges. */
  readonly sendingGuard: { readonly bouncePercent: number; readonly complaintPercent: number; readonly minSends: number };
  /** Automatic DNS re-checks of sending domains: while pending (every so many seconds, for so many hours), then once verified. */
  readonly domainChecks: { readonly pendingIntervalSeconds: number; readonly pendingHours: number; readonly verifiedIntervalSeconds: number };
  readonly workerPoolMax: number;
  /** Longest wait for a pooled connection (then 503 SERVICE_UNAVAILABLE), ms. */
  readonly databaseAcquireTimeoutMs: number;
  /** PostgreSQL statement_timeout of every connection, ms (0: none). */
  readonly databaseStatementTimeoutMs: number;
  /** How often the outbox relay looks for messages whose workflow was not started. */
  readonly relayIntervalMs: number;
  /** Bounds on a company's webhook endpoints: in all, and per URL host. */
  readonly webhookEndpointsPerCompany: number;
  readonly webhookEndpointsPerHost: number;
  /** Deadline of a webhook host's DNS lookup (save and every attempt), ms. */
  readonly webhookDnsTimeoutMs: number;
  /**
   * The hosted sign-up form's budgets (SIGNUP_PER_CLIENT_PER_MINUTE,
   * SIGNUP_PER_FORM_PER_MINUTE, SIGNUP_PER_COMPANY_PER_MINUTE) and the cap
   * of confirmation emails per company and hour. Optional so that
   * hand-built test configs stay valid (unset: the defaults).
   */
  readonly signupLimits?: { readonly perClientPerMinute: number; readonly perFormPerMinute: number; readonly perCompanyPerMinute: number };
  readonly confirmationsPerCompanyPerHour?: number;
  /** Simulator only: delay between taking a message and answering (models a slow service). */
  readonly simulatorHandoffDelayMs: number;
  /** `npm start` only: where the embedded PostgreSQL and Temporal dev server keep their data. */
  readonly dataDir: string;
  /** `npm start` only: the Temporal UI address it prints when TEMPORAL_ADDRESS is set. */
  readonly temporalUiUrl: string | undefined;
}

/** The configuration cannot be used; `problems` has one line per problem, each naming its variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  readonly mode: Mode;
  readonly problems: readonly string[];

  constructor(mode: Mode, problems: readonly string[]) {
    const count = problems.length === 1 ? "1 problem" : `${problems.length} problems`;
    super(`refusing to start: the configuration (${mode} mode) has ${count}:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.mode = mode;
    this.problems = problems;
  }
}

export function modeOf(env: NodeJS.ProcessEnv): Mode {
  return env.NODE_ENV === "production" || env.MAIL_MODE === "production" ? "production" : "development";
}

/** Reads and checks every variable at once; throws ConfigError listing every problem. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const mode = modeOf(env);
  const parsed = ENV_SCHEMA.safeParse(env);
  const problems = parsed.success ? [] : envProblems(parsed.error);
  if (parsed.success) problems.push(...temporalTlsProblems(parsed.data), ...operatorTlsProblems(parsed.data));
  if (mode === "production") problems.push(...productionProblems(env));
  if (!parsed.success || problems.length > 0) throw new ConfigError(mode, problems);
  const e = parsed.data;
  const apiKeyPepper = e.API_KEY_PEPPER ?? DEVELOPMENT_SECRETS.API_KEY_PEPPER;
  return {
    mode,
    databaseUrl: e.DATABASE_URL,
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    temporalTaskQueue: e.TEMPORAL_TASK_QUEUE,
    temporalTls: temporalTlsOf(e),
    temporalApiKey: e.TEMPORAL_API_KEY,
    temporalMetricsAddress: e.TEMPORAL_METRICS_ADDRESS,
    host: e.HOST,
    httpPort: e.HTTP_PORT,
    grpcPort: e.GRPC_PORT,
    operatorHost: e.OPERATOR_HOST,
    operatorPort: e.OPERATOR_PORT,
    operatorTls: operatorTlsOf(e),
    workerOperatorHost: e.WORKER_OPERATOR_HOST,
    workerOperatorPort: e.WORKER_OPERATOR_PORT,
    trustProxy: e.TRUST_PROXY,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    operatorToken: e.OPERATOR_TOKEN,
    apiKeyPepper,
    apiKeyPrefix: e.API_KEY_PREFIX,
    requestsPerMinute: e.RATE_LIMIT_PER_MINUTE,
    idempotencyWindowHours: e.IDEMPOTENCY_WINDOW_HOURS,
    idempotencyLeaseSeconds: e.IDEMPOTENCY_LEASE_SECONDS,
    keyRotationGraceHours: e.KEY_ROTATION_GRACE_HOURS,
    maxBodyBytes: e.MAX_BODY_BYTES,
    messageContentRetentionDays: e.MESSAGE_CONTENT_RETENTION_DAYS,
    keyUsageFlushMs: e.KEY_USAGE_FLUSH_MS,
    logLevel: e.LOG_LEVEL,
    dataEncryptionKey: e.DATA_ENCRYPTION_KEY ?? (mode === "development" ? DEVELOPMENT_SECRETS.DATA_ENCRYPTION_KEY : undefined),
    dataEncryptionKeys: e.DATA_ENCRYPTION_KEYS,
    spfInclude: e.SPF_INCLUDE,
    returnPathMxHost: e.RETURN_PATH_MX_HOST,
    dnsServers: e.DNS_SERVERS,
    allowVerificationOverride: e.ALLOW_VERIFICATION_OVERRIDE ?? mode === "development",
    allowSimulatorInProduction: e.ALLOW_SIMULATOR_IN_PRODUCTION,
    emailProvider: e.EMAIL_PROVIDER,
    smtp: {
      host: e.SMTP_HOST,
      port: e.SMTP_PORT,
      secure: e.SMTP_SECURE,
      requireTls: e.SMTP_REQUIRE_TLS,
      user: e.SMTP_USER,
      password: e.SMTP_PASSWORD,
      ehloName: e.SMTP_EHLO_NAME,
    },
    messageIdDomain: e.MESSAGE_ID_DOMAIN,
    deliveryReports: {
      // Unset: derived from the cursor secret (domain-separated), so no new secret to manage.
      verpSecret: e.VERP_SECRET ?? createHash("sha256").update(`mail.v1.verp:${e.CURSOR_SECRET ?? DEVELOPMENT_SECRETS.CURSOR_SECRET}`).digest("hex"),
      inboundSmtp: {
        enabled: e.INBOUND_SMTP_ENABLED,
        host: e.INBOUND_SMTP_HOST,
        port: e.INBOUND_SMTP_PORT,
        tlsCertFile: e.INBOUND_SMTP_TLS_CERT_FILE,
        tlsKeyFile: e.INBOUND_SMTP_TLS_KEY_FILE,
        maxMessageBytes: e.INBOUND_SMTP_MAX_BYTES,
        maxConnections: e.INBOUND_SMTP_MAX_CONNECTIONS,
        messagesPerMinute: e.INBOUND_SMTP_MESSAGES_PER_MINUTE,
      },
      ses: {
        region: e.SES_REGION,
        configurationSet: e.SES_CONFIGURATION_SET,
        endpoint: e.SES_ENDPOINT,
        snsTopicArn: e.SES_SNS_TOPIC_ARN,
      },
    },
    sendingRatePerSecond: e.SENDING_RATE_PER_SECOND,
    sendingBurst: e.SENDING_BURST,
    handoffTimeoutSeconds: e.HANDOFF_TIMEOUT_SECONDS,
    cursorSecret: e.CURSOR_SECRET ?? DEVELOPMENT_SECRETS.CURSOR_SECRET,
    formTokenSecret: e.FORM_TOKEN_SECRET ?? DEVELOPMENT_SECRETS.FORM_TOKEN_SECRET,
    confirmationSecret: e.CONFIRMATION_SECRET ?? DEVELOPMENT_SECRETS.CONFIRMATION_SECRET,
    runWorker: e.RUN_WORKER,
    relayIntervalMs: e.RELAY_INTERVAL_MS,
    webhookEndpointsPerCompany: e.WEBHOOK_ENDPOINTS_PER_COMPANY,
    webhookEndpointsPerHost: e.WEBHOOK_ENDPOINTS_PER_HOST,
    webhookDnsTimeoutMs: e.WEBHOOK_DNS_TIMEOUT_MS,
    signupLimits: {
      perClientPerMinute: e.SIGNUP_PER_CLIENT_PER_MINUTE,
      perFormPerMinute: e.SIGNUP_PER_FORM_PER_MINUTE,
      perCompanyPerMinute: e.SIGNUP_PER_COMPANY_PER_MINUTE,
    },
    confirmationsPerCompanyPerHour: e.CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR,
    apiPoolMax: e.API_POOL_MAX,
    publicBaseUrl: e.PUBLIC_BASE_URL,
    trackingBaseUrl: e.TRACKING_BASE_URL,
    systemSenderCompanyId: e.SYSTEM_SENDER_COMPANY_ID,
    lowCreditsThreshold: e.LOW_CREDITS_THRESHOLD,
    sendingGuard: { bouncePercent: e.SENDING_GUARD_BOUNCE_PERCENT, complaintPercent: e.SENDING_GUARD_COMPLAINT_PERCENT, minSends: e.SENDING_GUARD_MIN_SENDS },
    domainChecks: {
      pendingIntervalSeconds: e.DOMAIN_CHECK_PENDING_INTERVAL_SECONDS,
      pendingHours: e.DOMAIN_CHECK_PENDING_HOURS,
      verifiedIntervalSeconds: e.DOMAIN_CHECK_VERIFIED_INTERVAL_SECONDS,
    },
    workerPoolMax: e.WORKER_POOL_MAX,
    databaseAcquireTimeoutMs: e.DATABASE_ACQUIRE_TIMEOUT_MS,
    databaseStatementTimeoutMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    simulatorHandoffDelayMs: e.SIMULATOR_HANDOFF_DELAY_MS,
    dataDir: e.MAIL_DATA_DIR,
    temporalUiUrl: e.TEMPORAL_UI_URL,
  };
}

/** The delivery loop's settings (VERP_SECRET, INBOUND_SMTP_*, SES_*). */
export interface DeliveryReportsConfig {
  /** HMAC key of VERP tokens. Unset: derived from CURSOR_SECRET (or the API key pepper). */
  readonly verpSecret: string;
  readonly inboundSmtp: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    /** PEM files for STARTTLS; unset: STARTTLS is not offered (development only). */
    readonly tlsCertFile: string | undefined;
    readonly tlsKeyFile: string | undefined;
    readonly maxMessageBytes: number;
    readonly maxConnections: number;
    readonly messagesPerMinute: number;
  };
  readonly ses: {
    readonly region: string;
    readonly configurationSet: string | undefined;
    /** A local SES endpoint (tests, aws-ses-v2-local); unset: AWS. */
    readonly endpoint: string | undefined;
    /** When set, SNS notifications of any other topic are refused. */
    readonly snsTopicArn: string | undefined;
  };
}

/**
 * What a process logs at every start about a configuration it accepted but
 * that an operator must not forget (the entries print each line as a warning).
 */
export function startupWarnings(config: Pick<Config, "mode" | "emailProvider" | "allowSimulatorInProduction">): string[] {
  const warnings: string[] = [];
  if (config.mode === "production" && config.emailProvider === "simulator") {
    warnings.push(
      "EMAIL_PROVIDER=simulator in production (ALLOW_SIMULATOR_IN_PRODUCTION=true): messages are accepted and charged but never leave this service",
    );
  }
  return warnings;
}

/**
 * The base of every address the service gives out (sign-in links, hosted
 * forms, links in owner notices): PUBLIC_BASE_URL, or in development the
 * HTTP listener's own address (a wildcard host reached on 127.0.0.1).
 */
/** The base of campaign tracking addresses (/t/c, /t/o, /u): TRACKING_BASE_URL, or the public base URL. */
export function trackingBaseUrlOf(config: Pick<Config, "trackingBaseUrl" | "publicBaseUrl" | "host" | "httpPort">): string {
  return config.trackingBaseUrl ?? publicBaseUrlOf(config);
}

export function publicBaseUrlOf(config: Pick<Config, "publicBaseUrl" | "host" | "httpPort">): string {
  return config.publicBaseUrl ?? `http://${config.host === "0.0.0.0" ? "127.0.0.1" : config.host}:${config.httpPort}`;
}
