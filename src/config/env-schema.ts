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

/** A percentage from 0 to 100, decimals allowed (`0.3`). */
function percent(fallback: number) {
  return variable(fallback, (raw, ctx) => {
    const value = Number(raw);
    if (/^\d+(\.\d+)?$/.test(raw) && value <= 100) return value;
    ctx.addIssue(`must be a percentage from 0 to 100, got "${raw}"`);
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

/**
 * Which process reads a variable: the API process (`src/api-main.ts`), a
 * worker process (`src/worker-main.ts`), both (also `npm start`, which runs
 * the API with a worker inside), `npm start` alone (its embedded servers),
 * the operators' command line, or docker-compose.yml (from `.env`).
 */
export type ReadBy = "API and worker" | "API" | "worker" | "npm start" | "mailctl" | "Docker Compose";

/**
 * What the configuration reference (docs/configuration.md, written by
 * scripts/print-config-reference.ts) says of a variable, declared beside
 * its parser so that the two cannot drift apart.
 */
export interface VariableDoc {
  /** What it does, in Markdown; links are relative to docs/. */
  readonly description: string;
  /** Default: "API and worker". */
  readonly readBy?: ReadBy;
  /** The default as an operator should read it, when the parser's own fallback does not say it (mode-dependent, derived). */
  readonly defaultText?: string;
  /** Production refuses to start while it is unset. */
  readonly requiredInProduction?: true;
  /** What else production asks of it, in words (a condition, a form). */
  readonly production?: string;
}

/** The documentation of every entry of ENV_SCHEMA (docs/configuration.md). */
export const VARIABLE_DOCS = z.registry<VariableDoc>();

const DEV_SECRET = "development: a public value";

export const ENV_SCHEMA = z.object({
  // The mode (see src/config.ts): production when either says so.
  NODE_ENV: optionalText().register(VARIABLE_DOCS, { description: "`production` selects production mode" }),
  MAIL_MODE: oneOf(["development", "production"], "development").register(VARIABLE_DOCS, {
    description: "`development` or `production`; production if either this or `NODE_ENV` says so",
  }),

  DATABASE_URL: postgresUrl().register(VARIABLE_DOCS, {
    defaultText: "embedded PostgreSQL (`npm start`)",
    requiredInProduction: true,
    description:
      "PostgreSQL URL (`postgres://` or `postgresql://`); libpq TLS parameters such as `?sslmode=verify-full&sslrootcert=…` apply to every pool ([Managed PostgreSQL with TLS](operations.md#managed-postgresql-with-tls))",
  }),
  TEMPORAL_ADDRESS: hostAndPort("temporal:7233").register(VARIABLE_DOCS, {
    defaultText: "Temporal dev server (`npm start`)",
    requiredInProduction: true,
    description: "Temporal frontend `host:port`; the search attributes are registered in the namespace on start",
  }),
  TEMPORAL_NAMESPACE: text("default").register(VARIABLE_DOCS, { description: "Temporal namespace" }),
  TEMPORAL_TASK_QUEUE: text("mail").register(VARIABLE_DOCS, { description: "task queue of the workflows and activities" }),
  // A Temporal cluster with TLS, or Temporal Cloud: the names the Temporal
  // CLI and SDKs read too. Unset TEMPORAL_TLS: on when a client certificate
  // or an API key is set (src/config/combination-rules.ts checks the pairs).
  TEMPORAL_TLS: flag(undefined).register(VARIABLE_DOCS, {
    defaultText: "off; on when a `TEMPORAL_TLS_*` setting or `TEMPORAL_API_KEY` is set",
    description:
      "`true`: TLS towards Temporal (a cluster with TLS, Temporal Cloud; [Temporal](operations.md#a-temporal-cluster-or-temporal-cloud)); `false` with TLS settings or an API key is refused",
  }),
  TEMPORAL_TLS_CLIENT_CERT_PATH: optionalText().register(VARIABLE_DOCS, {
    description: "mTLS client certificate (PEM file, read at start); set with `TEMPORAL_TLS_CLIENT_KEY_PATH`, both or neither",
  }),
  TEMPORAL_TLS_CLIENT_KEY_PATH: optionalText().register(VARIABLE_DOCS, {
    description: "private key of the mTLS client certificate (PEM file, read at start)",
  }),
  TEMPORAL_TLS_SERVER_CA_CERT_PATH: optionalText().register(VARIABLE_DOCS, {
    defaultText: "the system's CAs",
    description: "CA of the Temporal server's certificate (PEM file)",
  }),
  TEMPORAL_TLS_SERVER_NAME: optionalText().register(VARIABLE_DOCS, {
    defaultText: "the host of `TEMPORAL_ADDRESS`",
    description: "name checked in the server's certificate (SNI)",
  }),
  TEMPORAL_API_KEY: secret().register(VARIABLE_DOCS, { description: "Temporal Cloud API key (secret; sent over TLS only)" }),
  // The Temporal SDK's Prometheus exporter of a process that runs a worker; unset: off.
  TEMPORAL_METRICS_ADDRESS: hostAndPort("127.0.0.1:9464").register(VARIABLE_DOCS, {
    defaultText: "unset: off",
    description:
      "`host:port` where the Temporal SDK's Prometheus exporter listens (`GET /metrics`) in a process that runs a worker, e.g. `127.0.0.1:9464`",
  }),

  HOST: text("127.0.0.1").register(VARIABLE_DOCS, { readBy: "API", description: "interface the listeners bind (`0.0.0.0` in a container)" }),
  HTTP_PORT: port(8080, 0).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "HTTP/1.1 port: JSON `/mail/v1`, Connect, gRPC-Web, OpenAPI, the screen (0: any free port)",
  }),
  GRPC_PORT: port(8081, 0).register(VARIABLE_DOCS, { readBy: "API", description: "cleartext HTTP/2 port: gRPC, Connect (0: any free port)" }),
  // The operator listener (AdminService, EventsService, /metrics): loopback unless said otherwise.
  OPERATOR_HOST: text("127.0.0.1").register(VARIABLE_DOCS, {
    readBy: "API",
    production: "a loopback address unless the listener has TLS",
    description:
      "interface of the operator listener (AdminService, EventsService, `/metrics`); production refuses anything but a loopback address unless the listener has TLS (below)",
  }),
  OPERATOR_PORT: port(8082, 0).register(VARIABLE_DOCS, { readBy: "API", description: "operator listener port, HTTP/1.1 and h2c (0: any free port)" }),
  // TLS on the operator listener (PEM files, read at start), both or neither: then production lets OPERATOR_HOST leave loopback.
  OPERATOR_TLS_CERT_PATH: optionalText().register(VARIABLE_DOCS, {
    readBy: "API",
    defaultText: "unset: plain",
    description:
      "TLS of the operator listener: certificate chain (PEM file, read at start), set with `OPERATOR_TLS_KEY_PATH`, both or neither; HTTP/1.1 and HTTP/2 (ALPN) on its one port. Clients use `https://` (`MAIL_ADMIN_URL`; `NODE_EXTRA_CA_CERTS` for a private CA)",
  }),
  OPERATOR_TLS_KEY_PATH: optionalText().register(VARIABLE_DOCS, {
    readBy: "API",
    defaultText: "unset: plain",
    description: "private key of the operator listener's certificate (PEM file, read at start)",
  }),
  // The worker process's own listener (/livez, /readyz, /metrics): loopback unless said otherwise.
  WORKER_OPERATOR_HOST: text("127.0.0.1").register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "interface of a worker process's listener (`npm run worker`, `src/worker-main.ts`): `/livez`, `/readyz`, `/metrics`",
  }),
  WORKER_OPERATOR_PORT: port(8083, 0).register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "port of that listener (0: any free port; give each worker on one host its own)",
  }),
  TRUST_PROXY: trustProxy().register(VARIABLE_DOCS, {
    readBy: "API",
    production: "refused when `true`",
    description:
      "proxies in front of the public listeners whose `X-Forwarded-For` names the client (failed-authentication limit, sign-up evidence, logs): `false`, `true` (any: only behind a proxy that overwrites the header), a hop count, or addresses and CIDR ranges (`10.0.0.0/8,loopback`); the operator listener never trusts it",
  }),
  SHUTDOWN_TIMEOUT_MS: wholeNumber(25_000, 1).register(VARIABLE_DOCS, {
    description:
      "SIGTERM: how long requests and activities in flight may take to finish before the process exits anyway (a worker cancels its activities at 80 % of it; Temporal retries them)",
  }),

  OPERATOR_TOKEN: secret().register(VARIABLE_DOCS, {
    readBy: "API",
    defaultText: "development: random per `npm start` run, printed",
    requiredInProduction: true,
    description: "bearer token of the operator listener (AdminService, and the company services with `x-mail-company-id`); `mailctl` sends it (secret)",
  }),
  API_KEY_PEPPER: secret().register(VARIABLE_DOCS, {
    defaultText: DEV_SECRET,
    requiredInProduction: true,
    description: "HMAC key of stored API key hashes (secret; changing it invalidates every key)",
  }),
  API_KEY_PREFIX: variable("tml", (raw, ctx) => {
    if (/^[a-z]{3}$/.test(raw)) return raw;
    ctx.addIssue(`must be three lower-case letters, got "${raw}"`);
    return z.NEVER;
  }).register(VARIABLE_DOCS, { description: "three lower-case letters that start every API key" }),
  DATA_ENCRYPTION_KEY: secret().register(VARIABLE_DOCS, {
    defaultText: DEV_SECRET,
    requiredInProduction: true,
    production: "or `DATA_ENCRYPTION_KEYS`",
    description:
      "the legacy data encryption key: seals stored secrets (DKIM private keys, webhook secrets, the service's own mail; HKDF-SHA256 to AES-256-GCM) while `DATA_ENCRYPTION_KEYS` is unset, and opens values sealed without a key id (secret; production may leave it unset once `DATA_ENCRYPTION_KEYS` is set and nothing sealed without an id remains; see [Rotating keys](operations.md#rotating-keys))",
  }),
  // Keys with ids: "k2:secret,k1:secret", the first seals, all open; DATA_ENCRYPTION_KEY opens values sealed before ids.
  DATA_ENCRYPTION_KEYS: sealingKeys().register(VARIABLE_DOCS, {
    description:
      "data encryption keys with ids, `k2:<secret>,k1:<secret>`: the first seals, every one opens what it sealed (ids: letters, digits, `-`, `_`; secrets checked like the others in production)",
  }),
  // Each signed token has its own key, none derived from API_KEY_PEPPER: rotating one invalidates nothing else.
  CURSOR_SECRET: secret().register(VARIABLE_DOCS, {
    defaultText: DEV_SECRET,
    requiredInProduction: true,
    description: "signs list cursors (secret; its own, never the pepper: rotating one leaves the other's signatures valid)",
  }),
  FORM_TOKEN_SECRET: secret().register(VARIABLE_DOCS, {
    defaultText: DEV_SECRET,
    requiredInProduction: true,
    description: "signs the hosted sign-up pages' form tokens (secret; changing it expires the pages open in browsers)",
  }),
  CONFIRMATION_SECRET: secret().register(VARIABLE_DOCS, {
    defaultText: DEV_SECRET,
    requiredInProduction: true,
    description: "signs the double opt-in confirmation links (secret; changing it expires the links already emailed)",
  }),

  RATE_LIMIT_PER_MINUTE: wholeNumber(600, 1).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "requests per minute per key (conversions: 300, from the contract)",
  }),
  IDEMPOTENCY_WINDOW_HOURS: wholeNumber(24).register(VARIABLE_DOCS, { readBy: "API", description: "how long first answers are kept per idempotency key" }),
  IDEMPOTENCY_LEASE_SECONDS: positiveNumber(40).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "how long an unanswered request holds its idempotency key",
  }),
  KEY_ROTATION_GRACE_HOURS: wholeNumber(24).register(VARIABLE_DOCS, { description: "how long a replaced key keeps working" }),
  MAX_BODY_BYTES: wholeNumber(2 * 1024 * 1024, 1).register(VARIABLE_DOCS, {
    readBy: "API",
    description:
      "larger bodies answer 413 `PAYLOAD_TOO_LARGE`; a send takes about 13.6 MiB more, for its attachments (10 MiB of files in base64)",
  }),
  MESSAGE_CONTENT_RETENTION_DAYS: wholeNumber(30, 1).register(VARIABLE_DOCS, {
    readBy: "API",
    description:
      "the HTML, text and attachments of a message are deleted this many days after it was accepted (hourly, once it was handed over); the message, its status and events stay",
  }),
  KEY_USAGE_FLUSH_MS: wholeNumber(5000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "\"last used\" of keys is written in batches this often (0: at once)",
  }),
  LOG_LEVEL: oneOf(LOG_LEVELS, "info").register(VARIABLE_DOCS, {
    description: "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`; bodies and secrets are never logged",
  }),

  SPF_INCLUDE: text("spf.mail.local").register(VARIABLE_DOCS, { description: "the SPF include handed to customers (`include:<value>`)" }),
  RETURN_PATH_MX_HOST: text("feedback.mail.local").register(VARIABLE_DOCS, {
    description: "MX host of custom return-path domains, where bounces arrive",
  }),
  DNS_SERVERS: list().register(VARIABLE_DOCS, {
    defaultText: "system resolvers",
    description: "resolvers for domain verification (`ip` or `ip:port`, comma-separated)",
  }),
  // Unset: the mode decides (true in development, false in production).
  ALLOW_VERIFICATION_OVERRIDE: flag(undefined).register(VARIABLE_DOCS, {
    defaultText: "development `true`, production `false`",
    production: "refused when `true`",
    description: "lets operators mark a domain verified without DNS (`mailctl domain verify … --override`)",
  }),

  // Production refuses EMAIL_PROVIDER=simulator unless this is true (a warning is logged at every start).
  ALLOW_SIMULATOR_IN_PRODUCTION: flag(false).register(VARIABLE_DOCS, {
    description: "`true`: production accepts `EMAIL_PROVIDER=simulator` (a trial that must not send) and warns at every start",
  }),
  EMAIL_PROVIDER: oneOf(["simulator", "smtp", "ses"], "simulator").register(VARIABLE_DOCS, {
    defaultText: "development: `simulator`",
    requiredInProduction: true,
    production: "`smtp` or `ses` (`simulator` only with `ALLOW_SIMULATOR_IN_PRODUCTION=true`)",
    description:
      "`simulator` (sends nothing, see [The email service behind us](delivery-loop.md#the-email-service-behind-us)), `smtp` or `ses`; production must name `smtp` or `ses`",
  }),
  SMTP_HOST: text("127.0.0.1").register(VARIABLE_DOCS, { readBy: "worker", description: "the SMTP relay's host (`EMAIL_PROVIDER=smtp`)" }),
  SMTP_PORT: port(25, 1).register(VARIABLE_DOCS, { readBy: "worker", description: "the SMTP relay's port" }),
  SMTP_SECURE: flag(false).register(VARIABLE_DOCS, { readBy: "worker", description: "`true`: TLS from the first byte (port 465)" }),
  SMTP_REQUIRE_TLS: flag(false).register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "`true`: STARTTLS or refuse to send, never clear text (port 587)",
  }),
  SMTP_USER: optionalText().register(VARIABLE_DOCS, {
    readBy: "worker",
    production: "only with `SMTP_SECURE=true` or `SMTP_REQUIRE_TLS=true`",
    description: "relay user name",
  }),
  SMTP_PASSWORD: secret().register(VARIABLE_DOCS, {
    readBy: "worker",
    production: "only with `SMTP_SECURE=true` or `SMTP_REQUIRE_TLS=true`",
    description: "relay password (secret)",
  }),
  // The name this host gives in EHLO (unset: the machine's hostname); relays and their logs show it.
  SMTP_EHLO_NAME: optionalText().register(VARIABLE_DOCS, {
    readBy: "worker",
    defaultText: "the machine's hostname",
    description: "the name announced in EHLO to the relay (its logs show it)",
  }),
  MESSAGE_ID_DOMAIN: text("mail.localhost").register(VARIABLE_DOCS, { description: "domain of outgoing Message-IDs" }),
  // Delivery reports (docs/delivery-loop.md): VERP return paths, the inbound SMTP listener, SES.
  VERP_SECRET: secret().register(VARIABLE_DOCS, {
    defaultText: "development: derived from `CURSOR_SECRET`",
    production: "required with `EMAIL_PROVIDER=smtp` or `INBOUND_SMTP_ENABLED=true`, its own secret",
    description:
      "key of the VERP return-path tokens (`b-<token>@bounces.<domain>`); API and workers must agree; changing it makes bounces of mail already sent unmatched",
  }),
  INBOUND_SMTP_ENABLED: flag(false).register(VARIABLE_DOCS, {
    readBy: "API",
    description:
      "`true`: the API process runs the inbound SMTP listener for DSN / ARF reports (see [Connecting a real relay](delivery-loop.md#connecting-a-real-relay))",
  }),
  INBOUND_SMTP_HOST: text("0.0.0.0").register(VARIABLE_DOCS, { readBy: "API", description: "the inbound listener's interface" }),
  INBOUND_SMTP_PORT: port(2525, 0).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "the inbound listener's port (publish port 25 of `RETURN_PATH_MX_HOST` to it)",
  }),
  INBOUND_SMTP_TLS_CERT_FILE: optionalText().register(VARIABLE_DOCS, {
    readBy: "API",
    production: "required with `INBOUND_SMTP_ENABLED=true`",
    description: "PEM certificate for STARTTLS; unset: no STARTTLS (development only)",
  }),
  INBOUND_SMTP_TLS_KEY_FILE: optionalText().register(VARIABLE_DOCS, {
    readBy: "API",
    production: "required with `INBOUND_SMTP_ENABLED=true`",
    description: "PEM private key for STARTTLS",
  }),
  INBOUND_SMTP_MAX_BYTES: wholeNumber(1024 * 1024, 1024).register(VARIABLE_DOCS, { readBy: "API", description: "largest report taken (552 above)" }),
  INBOUND_SMTP_MAX_CONNECTIONS: wholeNumber(50, 1).register(VARIABLE_DOCS, { readBy: "API", description: "simultaneous connections" }),
  INBOUND_SMTP_MESSAGES_PER_MINUTE: wholeNumber(120, 1).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "reports per remote address per minute (421 above)",
  }),
  SES_REGION: text("us-east-1").register(VARIABLE_DOCS, {
    description: "SES region; SNS certificate URLs must be on `sns.<region>.amazonaws.com`",
  }),
  SES_CONFIGURATION_SET: optionalText().register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "configuration set named on every SES send (its event destination is the SNS topic)",
  }),
  SES_ENDPOINT: optionalText().register(VARIABLE_DOCS, {
    readBy: "worker",
    defaultText: "unset (AWS)",
    description: "another SES v2 endpoint (tests: aws-ses-v2-local)",
  }),
  SES_SNS_TOPIC_ARN: optionalText().register(VARIABLE_DOCS, {
    readBy: "API",
    description: "when set, notifications of any other topic answer 403",
  }),

  SENDING_RATE_PER_SECOND: positiveNumber(50).register(VARIABLE_DOCS, { readBy: "worker", description: "sending pace shared by all workers, messages per second" }),
  SENDING_BURST: wholeNumber(50, 1).register(VARIABLE_DOCS, { readBy: "worker", description: "burst of that sending pace" }),
  HANDOFF_TIMEOUT_SECONDS: wholeNumber(60, 1).register(VARIABLE_DOCS, {
    description: "one handoff attempt, before Temporal retries it",
  }),
  RUN_WORKER: flag(true).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "run the Temporal worker in the API process (`false` when workers run apart: `npm run worker`)",
  }),
  RELAY_INTERVAL_MS: wholeNumber(2000, 1).register(VARIABLE_DOCS, {
    description:
      "outbox relay period (the webhook relay also wakes at once on PostgreSQL NOTIFY, channel `mail_webhook_work`; the period is its fallback)",
  }),
  WEBHOOK_ENDPOINTS_PER_COMPANY: wholeNumber(20, 1, 10_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "webhook endpoints a company may have; beyond it 400 `VALIDATION_ERROR` naming the limit",
  }),
  WEBHOOK_ENDPOINTS_PER_HOST: wholeNumber(3, 1, 10_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "webhook endpoints of a company with the same URL host; beyond it 400 `VALIDATION_ERROR` naming the limit",
  }),
  // Within the 10 s receiver budget, which covers the lookup too.
  WEBHOOK_DNS_TIMEOUT_MS: wholeNumber(3000, 100, 9000).register(VARIABLE_DOCS, {
    description:
      "deadline of a webhook host's DNS lookup (asynchronous resolver, on save and before every attempt; the attempt's 10 s cover it)",
  }),
  // The hosted sign-up form's anonymous door (docs/security.md, "The hosted sign-up form's limits").
  SIGNUP_PER_CLIENT_PER_MINUTE: wholeNumber(10, 1, 100_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "hosted sign-up form posts per client address per minute; beyond it the page answers 429 with `retry-after`",
  }),
  SIGNUP_PER_FORM_PER_MINUTE: wholeNumber(60, 1, 1_000_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "accepted sign-ups per form per minute; beyond it 429",
  }),
  SIGNUP_PER_COMPANY_PER_MINUTE: wholeNumber(120, 1, 1_000_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "accepted sign-ups per company per minute; beyond it 429",
  }),
  CONFIRMATION_EMAILS_PER_COMPANY_PER_HOUR: wholeNumber(100, 1, 1_000_000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "double opt-in confirmation emails a company sends per hour; beyond it sign-ups stay pending, no email, no credit",
  }),
  API_POOL_MAX: wholeNumber(10, 1, 1000).register(VARIABLE_DOCS, {
    readBy: "API",
    description: "PostgreSQL connections of the API's pool ([Scaling out](operations.md#scaling-out) counts them)",
  }),
  PUBLIC_BASE_URL: z
    .string()
    .optional()
    .transform((raw) => (raw === undefined || raw === "" ? undefined : raw.replace(/\/+$/, "")))
    .register(VARIABLE_DOCS, {
      defaultText: "development: `http://HOST:HTTP_PORT`",
      requiredInProduction: true,
      production: "`https://`",
      description:
        "public address of the API: the `url` of hosted sign-up forms, of confirmation links and of members' sign-in links (its origin is the one session calls may come from)",
    }),
  TRACKING_BASE_URL: z
    .string()
    .optional()
    .transform((raw) => (raw === undefined || raw === "" ? undefined : raw.replace(/\/+$/, "")))
    .register(VARIABLE_DOCS, {
      defaultText: "`PUBLIC_BASE_URL`",
      production: "`https://`",
      description:
        "base of campaign tracking addresses: tracked links `/t/c/…`, the open pixel `/t/o/…` and the unsubscribe link `/u/…` (a tracking domain of its own must reach this API; see [tracking.md](tracking.md))",
    }),
  // Members' sign-in links are emailed from this company's default sender (its send path and credits); unset: links are handed to the operator.
  SYSTEM_SENDER_COMPANY_ID: optionalText().register(VARIABLE_DOCS, {
    description: "the company whose default sender emails members' sign-in links (its credits pay); unset: invites answer the link instead",
  }),
  LOW_CREDITS_THRESHOLD: wholeNumber(100, 0, 1_000_000_000).register(VARIABLE_DOCS, {
    description:
      "below this balance a company's credits are low: the screen shows a banner, and the charge that takes the balance below it emails the company's owners, at most once a day (from `SYSTEM_SENDER_COMPANY_ID`); 0: never low",
  }),
  SENDING_GUARD_BOUNCE_PERCENT: percent(5).register(VARIABLE_DOCS, {
    description:
      "a company's sending is suspended when the share of its sends of the last 24 hours that bounced passes this (percent, `100`: never); see docs/deliverability.md",
  }),
  SENDING_GUARD_COMPLAINT_PERCENT: percent(0.3).register(VARIABLE_DOCS, {
    description:
      "a company's sending is suspended when the share of its sends of the last 24 hours that drew a complaint passes this (percent, `100`: never)",
  }),
  SENDING_GUARD_MIN_SENDS: wholeNumber(200, 1, 1_000_000_000).register(VARIABLE_DOCS, {
    description: "the sending guard judges a company only once its last 24 hours hold at least this many sends",
  }),
  DOMAIN_CHECK_PENDING_INTERVAL_SECONDS: wholeNumber(300, 1, 86_400).register(VARIABLE_DOCS, {
    description: "how often the service re-checks a pending sending domain's DNS records by itself (for up to `DOMAIN_CHECK_PENDING_HOURS`)",
  }),
  DOMAIN_CHECK_PENDING_HOURS: wholeNumber(72, 1, 8760).register(VARIABLE_DOCS, {
    description: "how long a domain that is not verified is re-checked automatically; after that only \"check now\" checks it (until it is verified)",
  }),
  DOMAIN_CHECK_VERIFIED_INTERVAL_SECONDS: wholeNumber(86_400, 60, 2_592_000).register(VARIABLE_DOCS, {
    description: "how often a verified (or degraded) domain is re-checked; a record lost in between makes it `degraded` and emails the owners",
  }),
  WORKER_POOL_MAX: wholeNumber(10, 3, 1000).register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "PostgreSQL connections of the worker's pool; the worker runs at most `WORKER_POOL_MAX - 2` activities at once",
  }),
  DATABASE_ACQUIRE_TIMEOUT_MS: wholeNumber(5000, 1).register(VARIABLE_DOCS, {
    description: "longest wait for a pooled connection; then 503 `SERVICE_UNAVAILABLE` with `retry-after`",
  }),
  DATABASE_STATEMENT_TIMEOUT_MS: wholeNumber(30000, 0).register(VARIABLE_DOCS, {
    description: "PostgreSQL `statement_timeout` of every connection (0: none)",
  }),
  SIMULATOR_HANDOFF_DELAY_MS: wholeNumber(0).register(VARIABLE_DOCS, {
    readBy: "worker",
    description: "simulator only: delay before it answers a handoff",
  }),

  // Read by `npm start` (src/main.ts) only: the embedded servers' data and the printed UI address.
  MAIL_DATA_DIR: text(".data").register(VARIABLE_DOCS, {
    readBy: "npm start",
    description: "where `npm start` keeps the embedded PostgreSQL and Temporal data",
  }),
  TEMPORAL_UI_URL: optionalText().register(VARIABLE_DOCS, {
    readBy: "npm start",
    description: "the Temporal UI address `npm start` prints when `TEMPORAL_ADDRESS` is set",
  }),
});

export type ParsedEnv = z.output<typeof ENV_SCHEMA>;

/** The name of every variable the configuration reads. */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(ENV_SCHEMA.shape);

/** The documentation of one variable of ENV_SCHEMA; every entry has one (the configuration reference's test says so). */
export function variableDoc(name: string): VariableDoc {
  const doc = documentationOf(name);
  if (doc === undefined) throw new Error(`${name} has no entry in VARIABLE_DOCS (src/config/env-schema.ts)`);
  return doc;
}

function documentationOf(name: string): VariableDoc | undefined {
  const schema = (ENV_SCHEMA.shape as Record<string, z.ZodType>)[name];
  return schema === undefined ? undefined : VARIABLE_DOCS.get(schema);
}

/** What a variable is when unset, as ENV_SCHEMA parses it (`undefined`: unset). */
export function parsedDefault(name: string): unknown {
  const schema = (ENV_SCHEMA.shape as Record<string, z.ZodType>)[name];
  if (schema === undefined) throw new Error(`${name} is not in ENV_SCHEMA`);
  return schema.parse(undefined);
}

/**
 * Variables only the development entry (`npm start`, src/main.ts) reads,
 * for its embedded PostgreSQL and Temporal dev server: a container or any
 * production deployment has no use for them.
 */
export const DEVELOPMENT_ONLY_VARIABLES: readonly string[] = CONFIG_VARIABLES.filter((name) => documentationOf(name)?.readBy === "npm start");

/**
 * Variables read outside the service's configuration: by `npm start` before
 * the configuration is loaded, by mailctl, and by the Compose files (from
 * `.env`, see `.env.example`). Listed here so that the configuration
 * reference is complete from one source.
 */
export const VARIABLES_READ_ELSEWHERE: Readonly<Record<string, VariableDoc & { readonly defaultText: string }>> = {
  TEMPORAL_CLI_PATH: {
    readBy: "npm start",
    defaultText: "`temporal` on `PATH`, `~/go/bin/temporal`",
    description: "Temporal CLI for the dev server (src/runtime/temporal-dev-server.ts; the tests and benchmarks read it too)",
  },
  MAIL_ADMIN_URL: {
    readBy: "mailctl",
    defaultText: "`http://127.0.0.1:8082`",
    description: "the operator listener `mailctl` calls (with `OPERATOR_TOKEN`); `https://` when it has TLS",
  },
  POSTGRES_PASSWORD: {
    readBy: "Docker Compose",
    defaultText: "none",
    description: "password of the compose PostgreSQL's superuser `postgres`, used inside that container only (secret)",
  },
  MAIL_DB_PASSWORD: {
    readBy: "Docker Compose",
    defaultText: "none",
    description:
      "password of the `mail` role (the API and the workers; owner of the `mail` database only), placed in `DATABASE_URL` (secret; URL-safe; docker-compose.yml, deploy/postgres-init/10-roles.sh)",
  },
  TEMPORAL_DB_PASSWORD: {
    readBy: "Docker Compose",
    defaultText: "none",
    description:
      "password of the `temporal` role (the Temporal server; owner of `temporal` and `temporal_visibility` only) (secret; URL-safe; docker-compose.yml, deploy/postgres-init/10-roles.sh)",
  },
  MAIL_PUBLISH_ADDRESS: {
    readBy: "Docker Compose",
    defaultText: "`127.0.0.1`",
    description: "host address the API's HTTP port is published on",
  },
  MAIL_SMTP_PUBLISH_ADDRESS: {
    readBy: "Docker Compose",
    defaultText: "`0.0.0.0`",
    description: "host address port 25 is published on for the inbound SMTP listener (deploy/compose.inbound-smtp.yml)",
  },
  INBOUND_SMTP_TLS_DIR: {
    readBy: "Docker Compose",
    defaultText: "none",
    description:
      "folder holding `inbound-smtp.crt` and `inbound-smtp.key`, mounted for the inbound listener's STARTTLS (deploy/compose.inbound-smtp.yml)",
  },
};

/** "HTTP_PORT must be ..." for each problem, in schema order. */
export function envProblems(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join(".")} ${issue.message}`);
}
