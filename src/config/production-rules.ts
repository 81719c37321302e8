/**
 * What production refuses to start with. The checks read the raw
 * environment, not the parsed one, so they still run (and every problem is
 * listed at once) when some other variable is malformed. No message
 * repeats a secret's value.
 */
import ipaddr from "ipaddr.js";

/**
 * The secrets every production process needs, each with one job: the
 * cursor, form-token and confirmation keys are not derived from the API key
 * pepper, so rotating one of them invalidates nothing signed by another.
 * DATA_ENCRYPTION_KEY may be replaced by DATA_ENCRYPTION_KEYS (keys with ids).
 */
export const REQUIRED_SECRETS = [
  "API_KEY_PEPPER",
  "DATA_ENCRYPTION_KEY",
  "OPERATOR_TOKEN",
  "CURSOR_SECRET",
  "FORM_TOKEN_SECRET",
  "CONFIRMATION_SECRET",
] as const;

/** What production accepts as EMAIL_PROVIDER: a real email service (the simulator delivers nothing). */
export const PRODUCTION_EMAIL_PROVIDERS = ["smtp", "ses"] as const;

export const MIN_SECRET_LENGTH = 32;

/** The development secrets `npm start` uses when none is set; public, since they are in this repository. */
export const DEVELOPMENT_SECRETS = {
  API_KEY_PEPPER: "dev-only-pepper-change-me",
  DATA_ENCRYPTION_KEY: "dev-only-data-encryption-key-change-me",
  CURSOR_SECRET: "dev-only-cursor-secret-change-me",
  FORM_TOKEN_SECRET: "dev-only-form-token-secret-change-me",
  CONFIRMATION_SECRET: "dev-only-confirmation-secret-change-me",
} as const;

/**
 * Values published in this repository (earlier docker-compose.yml, test
 * harnesses): whoever reads the code knows them. Besides these, anything
 * that looks like a placeholder is refused (PLACEHOLDER below).
 */
const PUBLISHED_VALUES: ReadonlySet<string> = new Set([
  ...Object.values(DEVELOPMENT_SECRETS),
  "change-me-operator-token",
  "change-me-pepper",
  "change-me-data-encryption-key",
  "test-operator-token-0123456789",
  "test-pepper",
]);

const PLACEHOLDER = /change-?me|dev-only|placeholder|replace-?(me|this|with)|your-?secret/i;

function isHttpsUrl(raw: string): boolean {
  try {
    const url = new URL(raw);
    return url.protocol === "https:" && url.hostname !== "";
  } catch {
    return false;
  }
}

const GENERATE_HINT = "e.g. `openssl rand -base64 48`";

function secretProblem(name: string, value: string): string | undefined {
  if (PUBLISHED_VALUES.has(value) || PLACEHOLDER.test(value)) {
    return `${name} is a development or placeholder value published in this repository: set a random secret (${GENERATE_HINT})`;
  }
  if (value.length < MIN_SECRET_LENGTH) {
    return `${name} is ${value.length} characters long: production needs at least ${MIN_SECRET_LENGTH} random characters (${GENERATE_HINT})`;
  }
  return undefined;
}

/** `host` names this machine only: a loopback address or `localhost`. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (bare.toLowerCase() === "localhost") return true;
  if (!ipaddr.isValid(bare)) return false;
  const address = ipaddr.process(bare);
  return address.range() === "loopback";
}

/** The keys of DATA_ENCRYPTION_KEYS as `id:secret` entries (parsed again, leniently: the schema reports the shape). */
function keyedSecrets(raw: string | undefined): { id: string; secret: string }[] {
  if (raw === undefined) return [];
  return raw.split(",").flatMap((entry) => {
    const colon = entry.indexOf(":");
    return colon < 0 ? [] : [{ id: entry.slice(0, colon).trim(), secret: entry.slice(colon + 1).trim() }];
  });
}

export function productionProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const set = (name: string): string | undefined => (env[name] === undefined || env[name] === "" ? undefined : env[name]);
  const keyed = keyedSecrets(set("DATA_ENCRYPTION_KEYS"));

  for (const name of REQUIRED_SECRETS) {
    const value = set(name);
    // Keys with ids replace the single data encryption key (which then only opens values sealed before ids).
    if (value === undefined && name === "DATA_ENCRYPTION_KEY" && keyed.length > 0) continue;
    const problem =
      value === undefined
        ? `${name} is not set: production needs a random secret of at least ${MIN_SECRET_LENGTH} characters (${GENERATE_HINT})` +
          (name === "DATA_ENCRYPTION_KEY" ? " (or DATA_ENCRYPTION_KEYS, keys with ids)" : "")
        : secretProblem(name, value);
    if (problem) problems.push(problem);
  }
  for (const { id, secret } of keyed) {
    const problem = secret === "" ? undefined : secretProblem(`DATA_ENCRYPTION_KEYS (key ${id})`, secret);
    if (problem) problems.push(problem);
  }
  // One secret doing two jobs: leaking one (an operator token pasted in a
  // ticket) would give away the other.
  for (let i = 0; i < REQUIRED_SECRETS.length; i++) {
    for (let j = i + 1; j < REQUIRED_SECRETS.length; j++) {
      const a = REQUIRED_SECRETS[i] as string;
      const b = REQUIRED_SECRETS[j] as string;
      if (set(a) !== undefined && set(a) === set(b)) problems.push(`${a} and ${b} have the same value: use a different secret for each`);
    }
  }

  if (set("ALLOW_VERIFICATION_OVERRIDE") === "true") {
    problems.push(
      "ALLOW_VERIFICATION_OVERRIDE=true lets operators mark sending domains verified without DNS checks: not allowed in production (unset it)",
    );
  }
  if (set("DATABASE_URL") === undefined) {
    problems.push("DATABASE_URL is not set: production needs an external PostgreSQL (the embedded one is for development)");
  }
  if (set("TEMPORAL_ADDRESS") === undefined) {
    problems.push("TEMPORAL_ADDRESS is not set: production needs a Temporal cluster (the dev server is for development)");
  }

  // A production process names a real
  // email service, is reached at an https address, keeps the operator
  // listener on this machine and trusts only the proxies it names.
  const provider = set("EMAIL_PROVIDER");
  if (provider === undefined) {
    problems.push(
      `EMAIL_PROVIDER is not set: production must name the email service (${PRODUCTION_EMAIL_PROVIDERS.join(" or ")}); ` +
        "the development default, the simulator, delivers nothing",
    );
  } else if (provider === "simulator" && set("ALLOW_SIMULATOR_IN_PRODUCTION") !== "true") {
    problems.push(
      `EMAIL_PROVIDER=simulator delivers nothing: production needs ${PRODUCTION_EMAIL_PROVIDERS.join(" or ")} ` +
        "(for a trial deployment that must not send, set ALLOW_SIMULATOR_IN_PRODUCTION=true: every start then logs a warning)",
    );
  }

  const publicBaseUrl = set("PUBLIC_BASE_URL");
  if (publicBaseUrl === undefined) {
    problems.push(
      "PUBLIC_BASE_URL is not set: production needs the API's public https:// address (the hosted sign-up forms and confirmation links carry it)",
    );
  } else if (!isHttpsUrl(publicBaseUrl)) {
    problems.push(
      `PUBLIC_BASE_URL must be an https:// URL in production (the hosted sign-up forms and confirmation links carry it), got "${publicBaseUrl}"`,
    );
  }

  const trackingBaseUrl = set("TRACKING_BASE_URL");
  if (trackingBaseUrl !== undefined && !isHttpsUrl(trackingBaseUrl)) {
    problems.push(`TRACKING_BASE_URL must be an https:// URL in production (List-Unsubscribe one-click needs https), got "${trackingBaseUrl}"`);
  }

  const operatorHost = set("OPERATOR_HOST");
  const operatorTls = set("OPERATOR_TLS_CERT_PATH") !== undefined && set("OPERATOR_TLS_KEY_PATH") !== undefined;
  if (operatorHost !== undefined && !isLoopbackHost(operatorHost) && !operatorTls) {
    problems.push(
      `OPERATOR_HOST=${operatorHost} is not a loopback address and the operator listener (AdminService with its bearer token, /metrics) ` +
        "has no TLS: set OPERATOR_TLS_CERT_PATH and OPERATOR_TLS_KEY_PATH, or keep it on 127.0.0.1 or ::1",
    );
  }

  if (set("TRUST_PROXY") === "true") {
    problems.push(
      "TRUST_PROXY=true believes X-Forwarded-For from any peer, so any client can pick the address the sign-up limits and evidence use: " +
        "set the number of proxies in front (e.g. TRUST_PROXY=1) or their addresses or CIDR ranges (e.g. TRUST_PROXY=10.0.0.0/8)",
    );
  }

  const credentials = ["SMTP_USER", "SMTP_PASSWORD"].filter((name) => set(name) !== undefined);
  if (credentials.length > 0 && set("SMTP_SECURE") !== "true" && set("SMTP_REQUIRE_TLS") !== "true") {
    problems.push(
      `${credentials.join(" and ")} set without TLS: set SMTP_SECURE=true (TLS from the first byte, port 465) ` +
        "or SMTP_REQUIRE_TLS=true (STARTTLS or fail), so the credentials never cross the network in clear text",
    );
  }
  // Bounce addresses (VERP) sent with SMTP mail outlive any rotation of the
  // cursor secret they would otherwise be derived from: their own secret.
  if (set("EMAIL_PROVIDER") === "smtp" || set("INBOUND_SMTP_ENABLED") === "true") {
    const verp = set("VERP_SECRET");
    const problem =
      verp === undefined
        ? `VERP_SECRET is not set: with SMTP, production needs its own secret for the bounce addresses, at least ${MIN_SECRET_LENGTH} characters (${GENERATE_HINT})`
        : (secretProblem("VERP_SECRET", verp) ??
          REQUIRED_SECRETS.filter((name) => set(name) === verp).map((name) => `${name} and VERP_SECRET have the same value: use a different secret for each`)[0]);
    if (problem) problems.push(problem);
  }
  // The inbound listener faces the internet: reports carry recipients' addresses.
  if (set("INBOUND_SMTP_ENABLED") === "true" && (set("INBOUND_SMTP_TLS_CERT_FILE") === undefined || set("INBOUND_SMTP_TLS_KEY_FILE") === undefined)) {
    problems.push("INBOUND_SMTP_ENABLED=true without INBOUND_SMTP_TLS_CERT_FILE and INBOUND_SMTP_TLS_KEY_FILE: the listener must offer STARTTLS");
  }
  return problems;
}
