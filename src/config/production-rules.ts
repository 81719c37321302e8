/**
 * What production refuses to start with. The checks read the raw
 * environment, not the parsed one, so they still run (and every problem is
 * listed at once) when some other variable is malformed. No message
 * repeats a secret's value.
 */

/** The secrets every production process needs. */
export const REQUIRED_SECRETS = ["API_KEY_PEPPER", "DATA_ENCRYPTION_KEY", "OPERATOR_TOKEN"] as const;

/** Secrets that are optional, but checked the same way when set. */
export const OPTIONAL_SECRETS = ["CURSOR_SECRET"] as const;

export const MIN_SECRET_LENGTH = 32;

/** The development secrets `npm start` uses when none is set; public, since they are in this repository. */
export const DEVELOPMENT_SECRETS = {
  API_KEY_PEPPER: "dev-only-pepper-change-me",
  DATA_ENCRYPTION_KEY: "dev-only-data-encryption-key-change-me",
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

export function productionProblems(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const set = (name: string): string | undefined => (env[name] === undefined || env[name] === "" ? undefined : env[name]);

  for (const name of REQUIRED_SECRETS) {
    const value = set(name);
    const problem =
      value === undefined
        ? `${name} is not set: production needs a random secret of at least ${MIN_SECRET_LENGTH} characters (${GENERATE_HINT})`
        : secretProblem(name, value);
    if (problem) problems.push(problem);
  }
  for (const name of OPTIONAL_SECRETS) {
    const value = set(name);
    const problem = value === undefined ? undefined : secretProblem(name, value);
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

  const credentials = ["SMTP_USER", "SMTP_PASSWORD"].filter((name) => set(name) !== undefined);
  if (credentials.length > 0 && set("SMTP_SECURE") !== "true" && set("SMTP_REQUIRE_TLS") !== "true") {
    problems.push(
      `${credentials.join(" and ")} set without TLS: set SMTP_SECURE=true (TLS from the first byte, port 465) ` +
        "or SMTP_REQUIRE_TLS=true (STARTTLS or fail), so the credentials never cross the network in clear text",
    );
  }
  return problems;
}
