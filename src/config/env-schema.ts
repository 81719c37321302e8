/**
 * Every environment variable the service reads, with its parser, in one
 * zod schema: checked once at start, all at once, each problem naming its
 * variable. An empty value means unset everywhere (so `NAME=` in an .env
 * file, or `${NAME:-}` in docker-compose.yml, falls back to the default).
 *
 * Error messages echo the bad value, except for values that may hold a
 * secret (URLs with passwords, tokens): those say only what is wrong.
 */
import ipaddr from "ipaddr.js";
import { z } from "zod";
import { SEALING_KEY_ID, type SealingKey } from "../capabilities/sending-setup/key-sealing.ts";

type Ctx = { addIssue(message: string): void };

const isUnset = (raw: string | undefined): raw is undefined | "" => raw === undefined || raw === "";

/** A variable parsed by `parse` when set, else `fallback`. */
function variable<T>(fallback: T, parse: (raw: string, ctx: Ctx) => T | typeof z.NEVER) {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T => (isUnset(raw) ? fallback : parse(raw, ctx)));
}

function wholeNumber(fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return variable(fallback, (raw, ctx) => {
    const value = Number(raw);
    if (/^\d+$/.test(raw) && value >= min && value <= max) return value;
    const range = max === Number.MAX_SAFE_INTEGER ? `${min} or more` : `from ${min} to ${max}`;
    ctx.addIssue(`must be a whole number ${range}, got "${raw}"`);
    return z.NEVER;
  });
}

/** A TCP port; 0 (listeners only) asks the system for a free one. */
function port(fallback: number, min: 0 | 1) {
  return variable(fallback, (raw, ctx) => {
    const value = Number(raw);
    if (/^\d+$/.test(raw) && value >= min && value <= 65535) return value;
    ctx.addIssue(`must be a port number from ${min} to 65535, got "${raw}"`);
    return z.NEVER;
  });
}

function positiveNumber(fallback: number) {
  return variable(fallback, (raw, ctx) => {
    const value = Number(raw);
    if (/^\d+(\.\d+)?$/.test(raw) && value > 0) return value;
    ctx.addIssue(`must be a number greater than 0, got "${raw}"`);
    return z.NEVER;
  });
}

/** Only `true` and `false`: "1", "yes" or "TRUE" are refused rather than guessed. */
function flag<T extends boolean | undefined>(fallback: T) {
  return variable<boolean | T>(fallback, (raw, ctx) => {
    if (raw === "true") return true;
    if (raw === "false") return false;
    ctx.addIssue(`must be true or false, got "${raw}"`);
    return z.NEVER;
  });
}

function oneOf<const T extends string>(values: readonly T[], fallback: T) {
  return variable<T>(fallback, (raw, ctx) => {
    const found = values.find((value) => value === raw);
    if (found !== undefined) return found;
    ctx.addIssue(`must be one of ${values.join(", ")}, got "${raw}"`);
    return z.NEVER;
  });
}

function text(fallback: string) {
  return variable(fallback, (raw) => raw);
}

function optionalText() {
  return variable<string | undefined>(undefined, (raw) => raw);
}

/** `a, b:53` -> ["a", "b:53"]. */
function list() {
  return variable<readonly string[]>([], (raw) =>
    raw
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ""),
  );
}

/** A PostgreSQL URL; never echoed, it usually holds a password. */
function postgresUrl() {
  return variable<string | undefined>(undefined, (raw, ctx) => {
    let protocol: string | undefined;
    try {
      protocol = new URL(raw).protocol;
    } catch {
      protocol = undefined;
    }
    if (protocol === "postgres:" || protocol === "postgresql:") return raw;
    ctx.addIssue("must be a postgres:// or postgresql:// URL (value not shown: it may hold a password)");
    return z.NEVER;
  });
}

/** `host:port` or `[ipv6]:port`: what the Temporal SDK connects to, or an address to bind. */
function hostAndPort(example: string) {
  return variable<string | undefined>(undefined, (raw, ctx) => {
    const match = /^(?:\[[0-9a-fA-F:.]+\]|[^\s:/[\]]+):(\d+)$/.exec(raw);
    const portNumber = Number(match?.[1]);
    if (match && portNumber >= 1 && portNumber <= 65535) return raw;
    ctx.addIssue(`must be host:port (e.g. ${example}), got "${raw}"`);
    return z.NEVER;
  });
}

/** The names proxy-addr (Fastify's trustProxy) knows for address ranges. */
const PROXY_RANGE_NAMES = ["loopback", "linklocal", "uniquelocal"];

/**
 * Which proxies may tell the client's address (X-Forwarded-For), as
 * Fastify's `trustProxy` takes it: false (none, the default), true (every
 * hop: only behind a proxy that overwrites the header), a hop count, or
 * addresses and CIDR ranges of the proxies.
 */
export type TrustProxy = boolean | number | readonly string[];

function trustProxy() {
  return variable<TrustProxy>(false, (raw, ctx) => {
    if (raw === "false") return false;
    if (raw === "true") return true;
    if (/^\d+$/.test(raw)) return Number(raw) === 0 ? false : Number(raw);
    const entries = raw
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    const bad = entries.filter((entry) => !PROXY_RANGE_NAMES.includes(entry) && !ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry));
    if (entries.length > 0 && bad.length === 0) return entries;
    ctx.addIssue(
      `must be false, true, a hop count, or a comma-separated list of proxy addresses, CIDR ranges, loopback, linklocal or uniquelocal; got "${raw}"`,
    );
    return z.NEVER;
  });
}

/** A secret: any non-empty text, never echoed. Production strength is checked by the production rules. */
function secret() {
  return optionalText();
}

/**
 * Data encryption keys with ids, `id:secret,id:secret`: the first seals,
 * every one opens what it sealed (src/capabilities/sending-setup/key-sealing.ts).
 * Never echoed; a problem names the entry by its position.
 */
function sealingKeys() {
  return variable<readonly SealingKey[]>([], (raw, ctx) => {
    const keys: SealingKey[] = [];
    const problems: string[] = [];
    raw.split(",").forEach((entry, index) => {
      const colon = entry.indexOf(":");
      const id = colon < 0 ? "" : entry.slice(0, colon).trim();
      const value = colon < 0 ? "" : entry.slice(colon + 1).trim();
      if (!SEALING_KEY_ID.test(id) || value === "") problems.push(`entry ${index + 1} is not id:secret`);
      else if (keys.some((key) => key.id === id)) problems.push(`key id ${id} is used twice`);
      else keys.push({ id, secret: value });
    });
    if (problems.length === 0) return keys;
    ctx.addIssue(
      `must be a comma-separated list of id:secret, ids of 1 to 32 letters, digits, - or _, the sealing key first (${problems.join("; ")}; values not shown)`,
    );
    return z.NEVER;
  });
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const ENV_SCHEMA = z.object({
  // The mode (see src/config.ts): production when either says so.
  NODE_ENV: optionalText(),
  MAIL_MODE: oneOf(["development", "production"], "development"),

  DATABASE_URL: postgresUrl(),
  TEMPORAL_ADDRESS: hostAndPort("temporal:7233"),
  TEMPORAL_NAMESPACE: text("default"),
  TEMPORAL_TASK_QUEUE: text("mail"),
  // A Temporal cluster with TLS, or Temporal Cloud: the names the Temporal
  // CLI and SDKs read too. Unset TEMPORAL_TLS: on when a client certificate
  // or an API key is set (src/config/combination-rules.ts checks the pairs).
  TEMPORAL_TLS: flag(undefined),
  TEMPORAL_TLS_CLIENT_CERT_PATH: optionalText(),
  TEMPORAL_TLS_CLIENT_KEY_PATH: optionalText(),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optionalText(),
  TEMPORAL_TLS_SERVER_NAME: optionalText(),
  TEMPORAL_API_KEY: secret(),
  // The Temporal SDK's Prometheus exporter of a process that runs a worker; unset: off.
  TEMPORAL_METRICS_ADDRESS: hostAndPort("127.0.0.1:9464"),

  HOST: text("127.0.0.1"),
  HTTP_PORT: port(8080, 0),
  GRPC_PORT: port(8081, 0),
  // The operator listener (AdminService, EventsService, /metrics): loopback unless said otherwise.
  OPERATOR_HOST: text("127.0.0.1"),
  OPERATOR_PORT: port(8082, 0),
  // TLS on the operator listener (PEM files, read at start), both or neither: then production lets OPERATOR_HOST leave loopback.
  OPERATOR_TLS_CERT_PATH: optionalText(),
  OPERATOR_TLS_KEY_PATH: optionalText(),
  // The worker process's own listener (/livez, /readyz, /metrics): loopback unless said otherwise.
  WORKER_OPERATOR_HOST: text("127.0.0.1"),
  WORKER_OPERATOR_PORT: port(8083, 0),
  TRUST_PROXY: trustProxy(),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(25_000, 1),

  OPERATOR_TOKEN: secret(),
  API_KEY_PEPPER: secret(),
  API_KEY_PREFIX: variable("tml", (raw, ctx) => {
    if (/^[a-z]{3}$/.test(raw)) return raw;
    ctx.addIssue(`must be three lower-case letters, got "${raw}"`);
    return z.NEVER;
  }),
  DATA_ENCRYPTION_KEY: secret(),
  // Keys with ids: "k2:secret,k1:secret", the first seals, all open; DATA_ENCRYPTION_KEY opens values sealed before ids.
  DATA_ENCRYPTION_KEYS: sealingKeys(),
  // Each signed token has its own key, none derived from API_KEY_PEPPER: rotating one invalidates nothing else.
  CURSOR_SECRET: secret(),
  FORM_TOKEN_SECRET: secret(),
  CONFIRMATION_SECRET: secret(),

  RATE_LIMIT_PER_MINUTE: wholeNumber(600, 1),
  IDEMPOTENCY_WINDOW_HOURS: wholeNumber(24),
  IDEMPOTENCY_LEASE_SECONDS: positiveNumber(40),
  KEY_ROTATION_GRACE_HOURS: wholeNumber(24),
  MAX_BODY_BYTES: wholeNumber(2 * 1024 * 1024, 1),
  KEY_USAGE_FLUSH_MS: wholeNumber(5000),
  LOG_LEVEL: oneOf(LOG_LEVELS, "info"),

  SPF_INCLUDE: text("spf.mail.local"),
  RETURN_PATH_MX_HOST: text("feedback.mail.local"),
  DNS_SERVERS: list(),
  // Unset: the mode decides (true in development, false in production).
  ALLOW_VERIFICATION_OVERRIDE: flag(undefined),

  // Production refuses EMAIL_PROVIDER=simulator unless this is true (a warning is logged at every start).
  ALLOW_SIMULATOR_IN_PRODUCTION: flag(false),
  EMAIL_PROVIDER: oneOf(["simulator", "smtp", "ses"], "simulator"),
  SMTP_HOST: text("127.0.0.1"),
  SMTP_PORT: port(25, 1),
  SMTP_SECURE: flag(false),
  SMTP_REQUIRE_TLS: flag(false),
  SMTP_USER: optionalText(),
  SMTP_PASSWORD: secret(),
  // The name this host gives in EHLO (unset: the machine's hostname); relays and their logs show it.
  SMTP_EHLO_NAME: optionalText(),
  MESSAGE_ID_DOMAIN: text("mail.localhost"),
  // Delivery reports (docs/delivery-loop.md): VERP return paths, the inbound SMTP listener, SES.
  VERP_SECRET: secret(),
  INBOUND_SMTP_ENABLED: flag(false),
  INBOUND_SMTP_HOST: text("0.0.0.0"),
  INBOUND_SMTP_PORT: port(2525, 0),
  INBOUND_SMTP_TLS_CERT_FILE: optionalText(),
  INBOUND_SMTP_TLS_KEY_FILE: optionalText(),
  INBOUND_SMTP_MAX_BYTES: wholeNumber(1024 * 1024, 1024),
  INBOUND_SMTP_MAX_CONNECTIONS: wholeNumber(50, 1),
  INBOUND_SMTP_MESSAGES_PER_MINUTE: wholeNumber(120, 1),
  SES_REGION: text("us-east-1"),
  SES_CONFIGURATION_SET: optionalText(),
  SES_ENDPOINT: optionalText(),
  SES_SNS_TOPIC_ARN: optionalText(),

  SENDING_RATE_PER_SECOND: positiveNumber(50),
  SENDING_BURST: wholeNumber(50, 1),
  HANDOFF_TIMEOUT_SECONDS: wholeNumber(60, 1),
  RUN_WORKER: flag(true),
  RELAY_INTERVAL_MS: wholeNumber(2000, 1),
  WEBHOOK_ENDPOINTS_PER_COMPANY: wholeNumber(20, 1, 10_000),
  WEBHOOK_ENDPOINTS_PER_HOST: wholeNumber(3, 1, 10_000),
  // Within the 10 s receiver budget, which covers the lookup too.
  WEBHOOK_DNS_TIMEOUT_MS: wholeNumber(3000, 100, 9000),
  // The hosted sign-up form's anonymous door (README: The hosted sign-up form's limits).
  SIGNUP_PER_CLIENT_PER_MINUTE: wholeNumber(10, 1, 100_000),
  SIGNUP_PER_FORM_PER_MINUTE: wholeNumber(60, 1, 1_000_000),
  SIGNUP_PER_COMPANY_PER_MINUTE: wholeNumber(120, 1, 1_000_000),
  CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR: wholeNumber(100, 1, 1_000_000),
  API_POOL_MAX: wholeNumber(10, 1, 1000),
  PUBLIC_BASE_URL: z.string().optional().transform((raw) => (raw === undefined || raw === "" ? undefined : raw.replace(/\/+$/, ""))),
  // Members' sign-in links are emailed from this company's default sender (its send path and credits); unset: links are handed to the operator.
  SYSTEM_SENDER_COMPANY_ID: optionalText(),
  WORKER_POOL_MAX: wholeNumber(10, 3, 1000),
  DATABASE_ACQUIRE_TIMEOUT_MS: wholeNumber(5000, 1),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(30000, 0),
  SIMULATOR_HANDOFF_DELAY_MS: wholeNumber(0),

  // Read by `npm start` (src/main.ts) only: the embedded servers' data and the printed UI address.
  MAIL_DATA_DIR: text(".data"),
  TEMPORAL_UI_URL: optionalText(),
});

export type ParsedEnv = z.output<typeof ENV_SCHEMA>;

/** The name of every variable the configuration reads. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ENV_SCHEMA.shape);

/**
 * Variables only the development entry (`npm start`, src/main.ts) reads,
 * for its embedded PostgreSQL and Temporal dev server: a container or any
 * production deployment has no use for them.
 */
export const DEVELOPMENT_ONLY_VARIABLES: readonly string[] = ["MAIL_DATA_DIR", "TEMPORAL_UI_URL"];

/** "HTTP_PORT must be ..." for each problem, in schema order. */
export function envProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join(".")} ${issue.message}`);
}
