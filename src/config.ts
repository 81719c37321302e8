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
}

const DEFAULT_PEPPER = "dev-only-pepper-change-me";

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
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
  };
}
