/**
 * Service configuration, from the environment. Every setting has a default
 * that works on a developer machine; README.md lists them all.
 */
export interface Config {
  /** PostgreSQL URL. Unset: `npm start` runs an embedded PostgreSQL. */
  readonly databaseUrl: string | undefined;
  /** Temporal frontend host:port. Unset: `npm start` runs a Temporal dev server. */
  readonly temporalAddress: string | undefined;
  readonly temporalNamespace: string;
  readonly temporalTaskQueue: string;
  /** Interface the servers listen on. */
  readonly host: string;
  /** HTTP/1.1 port: JSON /mail/v1 routes, Connect, gRPC-Web, OpenAPI. */
  readonly httpPort: number;
  /** Cleartext HTTP/2 (h2c) port: gRPC and Connect. */
  readonly grpcPort: number;
  /** Bearer token of the AdminService. Unset: the AdminService refuses every call. */
  readonly operatorToken: string | undefined;
  /** Secret mixed into API key hashes (HMAC key). */
  readonly apiKeyPepper: string;
  /** The three-letter service prefix of API keys. */
  readonly apiKeyPrefix: string;
  /** Requests per minute per API key (default for every operation). */
  readonly requestsPerMinute: number;
  readonly idempotencyWindowHours: number;
  readonly keyRotationGraceHours: number;
  /** Largest accepted request body, in bytes; larger answers 413 PAYLOAD_TOO_LARGE. */
  readonly maxBodyBytes: number;
  /** How often "last used" of API keys is written, in milliseconds. */
  readonly keyUsageFlushMs: number;
  readonly logLevel: string;
  /**
   * Secret from which the key that seals stored secrets (DKIM private keys)
   * is derived (HKDF-SHA256 -> AES-256-GCM). Use 32+ random bytes in
   * production; changing it makes every sealed key unreadable.
   */
  readonly dataEncryptionKey: string;
  /** The SPF include that covers our sending servers (`include:<spfInclude>`). */
  readonly spfInclude: string;
  /** Host the MX of each custom MAIL FROM (return-path) domain points at: where bounces arrive. */
  readonly returnPathMxHost: string;
  /** DNS servers for domain verification (`ip` or `ip:port`); empty: the system's resolvers. */
  readonly dnsServers: readonly string[];
  /** Whether operators may mark a sending domain verified without DNS checks (development only). */
  readonly allowVerificationOverride: boolean;
  /** The email service: `simulator` (default, see README) or `smtp`. */
  readonly emailProvider: "simulator" | "smtp";
  readonly smtp: {
    readonly host: string;
    readonly port: number;
    readonly secure: boolean;
    readonly user: string | undefined;
    readonly password: string | undefined;
  };
  /** Domain of the Message-ID header of outgoing mail. */
  readonly messageIdDomain: string;
  /** Sending pace shared by all workers: messages per second, and burst. */
  readonly sendingRatePerSecond: number;
  readonly sendingBurst: number;
  /** How long one handoff attempt may take before it is retried (by another worker). */
  readonly handoffTimeoutSeconds: number;
  /** How long a message workflow listens for delivery, bounce and complaint reports. */
  readonly outcomeWindowHours: number;
  /** Secret of the message-log cursors' signatures. */
  readonly cursorSecret: string;
  /** Run the Temporal worker in this process (`npm start` does). */
  readonly runWorker: boolean;
  /** How often the outbox relay looks for messages whose workflow was not started. */
  readonly relayIntervalMs: number;
  /** Simulator only: delay between taking a message and answering (models a slow service). */
  readonly simulatorHandoffDelayMs: number;
}

const DEFAULT_PEPPER = "dev-only-pepper-change-me";
const DEFAULT_DATA_ENCRYPTION_KEY = "dev-only-data-encryption-key-change-me";

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

function bool(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (raw !== "true" && raw !== "false") throw new Error(`${name} must be true or false, got "${raw}"`);
  return raw === "true";
}

/** `a, b:53` -> ["a", "b:53"]; each entry must be what Resolver#setServers accepts (checked there, at startup). */
function list(env: NodeJS.ProcessEnv, name: string): string[] {
  return (env[name] ?? "")
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
}

function positive(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

function emailProvider(raw: string | undefined): "simulator" | "smtp" {
  if (raw === undefined || raw === "" || raw === "simulator") return "simulator";
  if (raw === "smtp") return "smtp";
  throw new Error(`EMAIL_PROVIDER must be simulator or smtp, got "${raw}"`);
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const apiKeyPrefix = env.API_KEY_PREFIX ?? "tml";
  if (!/^[a-z]{3}$/.test(apiKeyPrefix)) throw new Error("API_KEY_PREFIX must be three lower-case letters");
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE ?? "default",
    temporalTaskQueue: env.TEMPORAL_TASK_QUEUE ?? "mail",
    host: env.HOST ?? "127.0.0.1",
    httpPort: int(env, "HTTP_PORT", 8080),
    grpcPort: int(env, "GRPC_PORT", 8081),
    operatorToken: env.OPERATOR_TOKEN || undefined,
    apiKeyPepper: env.API_KEY_PEPPER ?? DEFAULT_PEPPER,
    apiKeyPrefix,
    requestsPerMinute: int(env, "RATE_LIMIT_PER_MINUTE", 600),
    idempotencyWindowHours: int(env, "IDEMPOTENCY_WINDOW_HOURS", 24),
    keyRotationGraceHours: int(env, "KEY_ROTATION_GRACE_HOURS", 24),
    maxBodyBytes: int(env, "MAX_BODY_BYTES", 2 * 1024 * 1024),
    keyUsageFlushMs: int(env, "KEY_USAGE_FLUSH_MS", 5000),
    logLevel: env.LOG_LEVEL ?? "info",
    dataEncryptionKey: env.DATA_ENCRYPTION_KEY || DEFAULT_DATA_ENCRYPTION_KEY,
    spfInclude: env.SPF_INCLUDE || "spf.mail.local",
    returnPathMxHost: env.RETURN_PATH_MX_HOST || "feedback.mail.local",
    dnsServers: list(env, "DNS_SERVERS"),
    allowVerificationOverride: bool(env, "ALLOW_VERIFICATION_OVERRIDE", true),
    emailProvider: emailProvider(env.EMAIL_PROVIDER),
    smtp: {
      host: env.SMTP_HOST ?? "127.0.0.1",
      port: int(env, "SMTP_PORT", 25),
      secure: bool(env, "SMTP_SECURE", false),
      user: env.SMTP_USER || undefined,
      password: env.SMTP_PASSWORD || undefined,
    },
    messageIdDomain: env.MESSAGE_ID_DOMAIN ?? "mail.localhost",
    sendingRatePerSecond: positive(env, "SENDING_RATE_PER_SECOND", 50),
    sendingBurst: int(env, "SENDING_BURST", 50) || 1,
    handoffTimeoutSeconds: int(env, "HANDOFF_TIMEOUT_SECONDS", 60) || 60,
    outcomeWindowHours: int(env, "OUTCOME_WINDOW_HOURS", 72),
    cursorSecret: env.CURSOR_SECRET ?? env.API_KEY_PEPPER ?? DEFAULT_PEPPER,
    runWorker: bool(env, "RUN_WORKER", true),
    relayIntervalMs: int(env, "RELAY_INTERVAL_MS", 2000) || 2000,
    simulatorHandoffDelayMs: int(env, "SIMULATOR_HANDOFF_DELAY_MS", 0),
  };
}
