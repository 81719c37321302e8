/**
 * The deployment files, checked without a Docker engine: docker-compose.yml
 * against the Compose Specification's JSON schema (vendored, see README.md
 * here) and against what the service needs; the Dockerfile; .env.example;
 * what git and the build context leave out.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { API_NODE_FLAGS, WORKER_NODE_FLAGS } from "../../bench/lib/processes.ts";
import { CONFIG_VARIABLES, ConfigError, DEVELOPMENT_ONLY_VARIABLES, loadConfig } from "../../src/config.ts";
import {
  type ComposeService,
  composeFile,
  dockerfileStages,
  envFile,
  interpolate,
  interpolatedNames,
  mentionedIn,
  mergedService,
  readRepoFile,
  ROOT,
  serviceEnvironment,
} from "./deploy-files.ts";

const compose = composeFile();
const services = compose.services;
const APP_SERVICES = ["api", "worker"] as const;
const dotEnvExample = envFile(".env.example");

/** The secrets .env.example leaves for the operator to fill in. */
const SECRETS = [
  "POSTGRES_PASSWORD",
  "MAIL_DB_PASSWORD",
  "TEMPORAL_DB_PASSWORD",
  "API_KEY_PEPPER",
  "DATA_ENCRYPTION_KEY",
  "OPERATOR_TOKEN",
  "CURSOR_SECRET",
  "FORM_TOKEN_SECRET",
  "CONFIRMATION_SECRET",
  "VERP_SECRET",
];

/** .env.example as an operator fills it in: every empty secret set to a random-looking value, the email service and address named. */
function filledDotEnv(): Record<string, string> {
  const filled: Record<string, string> = { ...dotEnvExample };
  for (const name of SECRETS) {
    filled[name] = `${name.toLowerCase().replaceAll("_", "")}0123456789abcdef0123456789abcdef`;
  }
  return { ...filled, EMAIL_PROVIDER: "smtp", SMTP_HOST: "relay.example.net", PUBLIC_BASE_URL: "https://mail.example.com" };
}

function service(name: string): ComposeService {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}`);
  return found;
}

function loadIn(env: Record<string, string>): ReturnType<typeof loadConfig> | ConfigError {
  try {
    return loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
}

describe("docker-compose.yml", () => {
  it("is valid against the Compose Specification's JSON schema", () => {
    const { $schema: _, ...schema } = JSON.parse(readRepoFile("test/deploy/compose-spec.json")) as Record<string, unknown>;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const valid = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
  });

  it("runs PostgreSQL, Temporal on it, the Temporal UI, the API and a worker", () => {
    expect(Object.keys(services).sort()).toEqual(["api", "postgres", "temporal", "temporal-ui", "worker"]);
    expect(service("temporal").environment).toMatchObject({ DB: "postgres12", POSTGRES_SEEDS: "postgres" });
    expect(service("temporal").depends_on).toEqual({ postgres: { condition: "service_healthy" } });
  });

  it("pins every image to a version (never latest)", () => {
    for (const [name, { image, build }] of Object.entries(services)) {
      expect(image, name).toBeDefined();
      const tag = /^[^@]+:([^:/@]+)$/.exec(image ?? "")?.[1];
      expect(tag, `${name}: ${image}`).toBeDefined();
      expect(tag, name).not.toBe("latest");
      // Our own image is built here; a pulled one names its release.
      if (build === undefined) expect(tag, `${name}: ${image}`).toMatch(/^\d+\.\d+(\.\d+)?([-.][a-z0-9.-]+)?$/);
    }
  });

  it("gives every service a health check, and starts each after what it needs is healthy", () => {
    for (const [name, { healthcheck }] of Object.entries(services)) {
      expect(healthcheck?.test, name).toBeDefined();
      expect(healthcheck?.disable, name).not.toBe(true);
    }
    expect(service("api").depends_on).toEqual({
      postgres: { condition: "service_healthy" },
      temporal: { condition: "service_healthy" },
    });
    expect(service("worker").depends_on).toEqual({ api: { condition: "service_healthy" } });
  });

  it("gives Temporal and the service separate PostgreSQL roles, made by an init script, neither a superuser", () => {
    const postgres = service("postgres");
    const vars = filledDotEnv();
    const env = (s: ComposeService): Record<string, string> =>
      Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), vars)]));
    // The superuser stays in the PostgreSQL container; the init script gets the service roles' passwords.
    expect(env(postgres)).toMatchObject({
      POSTGRES_USER: "postgres",
      POSTGRES_PASSWORD: vars.POSTGRES_PASSWORD,
      MAIL_DB_PASSWORD: vars.MAIL_DB_PASSWORD,
      TEMPORAL_DB_PASSWORD: vars.TEMPORAL_DB_PASSWORD,
    });
    expect(postgres.volumes).toContain("./deploy/postgres-init:/docker-entrypoint-initdb.d:ro");
    // Temporal connects as `temporal` to databases the script made (it may not create any).
    expect(env(service("temporal"))).toMatchObject({ POSTGRES_USER: "temporal", POSTGRES_PWD: vars.TEMPORAL_DB_PASSWORD, SKIP_DB_CREATE: "true" });
    // The API and the worker connect as `mail`, with its own password.
    for (const name of APP_SERVICES) {
      const url = new URL(serviceEnvironment(service(name), vars).DATABASE_URL ?? "");
      expect([url.username, url.password, url.pathname], name).toEqual(["mail", vars.MAIL_DB_PASSWORD, "/mail"]);
    }
    expect(new Set([vars.POSTGRES_PASSWORD, vars.MAIL_DB_PASSWORD, vars.TEMPORAL_DB_PASSWORD]).size).toBe(3);
  });

  it("runs the init script on a real PostgreSQL: each role reaches its own databases only, none is a superuser", async () => {
    // The script as shipped, with unique role and database names so that it can run on the shared test server.
    const suffix = `_t${randomBytes(4).toString("hex")}`;
    const [mail, temporal] = [`mail${suffix}`, `temporal${suffix}`];
    const script = readRepoFile("deploy/postgres-init/10-roles.sh")
      .replace(/\btemporal_visibility\b/g, `${temporal}_visibility`)
      .replace(/(?<![\w$/-])temporal(?![\w-])/g, temporal)
      .replace(/(?<![\w$/@.-])mail(?![\w.-])/g, mail);
    const dir = mkdtempSync(path.join(tmpdir(), "roles-"));
    const file = path.join(dir, "10-roles.sh");
    writeFileSync(file, script);
    const admin = new URL(process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
    const pgEnv = {
      ...process.env,
      PGHOST: admin.hostname,
      PGPORT: admin.port || "5432",
      PGPASSWORD: decodeURIComponent(admin.password),
      POSTGRES_USER: decodeURIComponent(admin.username),
      MAIL_DB_PASSWORD: "mail-role-password-0123456789abcdef",
      TEMPORAL_DB_PASSWORD: "temporal-role-password-0123456789abcdef",
    };
    const connectAs = async (user: string, database: string): Promise<string> => {
      const client = new pg.Client({ host: pgEnv.PGHOST, port: Number(pgEnv.PGPORT), user, database, password: "unused-with-trust" });
      try {
        await client.connect();
        const { rows } = await client.query<{ su: string }>("select current_setting('is_superuser') as su");
        return `connected, superuser ${rows[0]?.su}`;
      } catch (error) {
        return (error as Error).message;
      } finally {
        await client.end().catch(() => undefined);
      }
    };
    const superuser = new pg.Client({ connectionString: admin.toString() });
    await superuser.connect();
    try {
      execFileSync("sh", [file], { env: pgEnv, stdio: "pipe" });
      // Run twice: on a volume made by an earlier version, an operator runs it by hand.
      execFileSync("sh", [file], { env: pgEnv, stdio: "pipe" });
      const roles = await superuser.query<{ rolname: string; rolsuper: boolean; rolcreatedb: boolean; rolcreaterole: boolean }>(
        "select rolname, rolsuper, rolcreatedb, rolcreaterole from pg_roles where rolname = any($1) order by rolname",
        [[mail, temporal]],
      );
      expect(roles.rows).toEqual([
        { rolname: mail, rolsuper: false, rolcreatedb: false, rolcreaterole: false },
        { rolname: temporal, rolsuper: false, rolcreatedb: false, rolcreaterole: false },
      ]);
      const owners = await superuser.query<{ datname: string; owner: string }>(
        "select datname, pg_get_userbyid(datdba) as owner from pg_database where datname = any($1) order by datname",
        [[mail, temporal, `${temporal}_visibility`]],
      );
      expect(owners.rows).toEqual([
        { datname: mail, owner: mail },
        { datname: temporal, owner: temporal },
        { datname: `${temporal}_visibility`, owner: temporal },
      ]);
      expect(await connectAs(mail, mail)).toBe("connected, superuser off");
      expect(await connectAs(temporal, temporal)).toBe("connected, superuser off");
      expect(await connectAs(temporal, `${temporal}_visibility`)).toBe("connected, superuser off");
      expect(await connectAs(mail, temporal)).toMatch(/permission denied for database/);
      expect(await connectAs(mail, `${temporal}_visibility`)).toMatch(/permission denied for database/);
      expect(await connectAs(temporal, mail)).toMatch(/permission denied for database/);
    } finally {
      for (const database of [mail, temporal, `${temporal}_visibility`]) await superuser.query(`drop database if exists ${database} with (force)`);
      for (const role of [mail, temporal]) await superuser.query(`drop role if exists ${role}`);
      await superuser.end();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps PostgreSQL's data in a named volume", () => {
    const volumes = service("postgres").volumes ?? [];
    expect(volumes).toContain("postgres-data:/var/lib/postgresql/data");
    expect(Object.keys(compose.volumes ?? {})).toContain("postgres-data");
  });

  it("publishes only the API's HTTP port, on 127.0.0.1 unless MAIL_PUBLISH_ADDRESS says otherwise", () => {
    const published = Object.entries(services).filter(([, s]) => (s.ports ?? []).length > 0);
    expect(published.map(([name]) => name)).toEqual(["api"]);
    expect(service("api").ports).toEqual(["${MAIL_PUBLISH_ADDRESS:-127.0.0.1}:8080:8080"]);
    expect(interpolate("${MAIL_PUBLISH_ADDRESS:-127.0.0.1}:8080:8080", {})).toBe("127.0.0.1:8080:8080");
    expect(interpolate("${MAIL_PUBLISH_ADDRESS:-127.0.0.1}:8080:8080", dotEnvExample)).toBe("127.0.0.1:8080:8080");
    for (const [name, s] of Object.entries(services)) expect(s.network_mode, name).toBeUndefined();
    // Inside its container the API listens on every interface of the compose network.
    expect(serviceEnvironment(service("api"), filledDotEnv())).toMatchObject({ HOST: "0.0.0.0", HTTP_PORT: "8080" });
  });

  it("runs the API and the worker from one image and one .env, the worker apart from the API", () => {
    const api = service("api");
    const worker = service("worker");
    expect(worker.image).toBe(api.image);
    expect(worker.build).toEqual(api.build);
    for (const s of [api, worker]) expect(s.env_file).toEqual([{ path: ".env", required: true }]);
    expect(api.command).toBeUndefined(); // the image's CMD: src/api-main.ts
    // With the V8 memory settings the benchmark measured (bench/lib/processes.ts), as `npm run worker` runs it.
    expect(worker.command).toEqual(["node", "--disable-warning=ExperimentalWarning", ...WORKER_NODE_FLAGS, "src/worker-main.ts"]);
    const scripts = (JSON.parse(readRepoFile("package.json")) as { scripts: Record<string, string> }).scripts;
    expect(scripts.worker).toBe(["node", "--disable-warning=ExperimentalWarning", ...WORKER_NODE_FLAGS, "src/worker-main.ts"].join(" "));
    expect(serviceEnvironment(api, filledDotEnv()).RUN_WORKER).toBe("false");
  });

  it("sets every variable the service reads for the API and the worker (in the file, or through .env from .env.example)", () => {
    const needed = CONFIG_VARIABLES.filter((name) => !DEVELOPMENT_ONLY_VARIABLES.includes(name));
    // src/worker-main.ts opens none of the API's listeners and is the worker whatever RUN_WORKER says.
    const apiOnly = ["HOST", "HTTP_PORT", "GRPC_PORT", "OPERATOR_HOST", "OPERATOR_PORT", "RUN_WORKER"];
    const api = serviceEnvironment(service("api"), filledDotEnv());
    expect(needed.filter((variable) => !(variable in api))).toEqual([]);
    const worker = serviceEnvironment(service("worker"), filledDotEnv());
    expect(needed.filter((variable) => !(variable in worker) && !apiOnly.includes(variable))).toEqual([]);
  });

  it("gives both processes time to drain at SIGTERM before Docker kills them", () => {
    for (const name of APP_SERVICES) {
      const config = loadIn(serviceEnvironment(service(name), filledDotEnv()));
      if (config instanceof ConfigError) throw new Error(`${name}: ${config.message}`);
      const grace = (service(name) as { stop_grace_period?: string }).stop_grace_period ?? "10s";
      const graceMs = Number(/^(\d+)s$/.exec(grace)?.[1]) * 1000;
      expect(graceMs, name).toBeGreaterThan(config.shutdownTimeoutMs);
    }
  });

  it("exports the worker's Temporal SDK metrics, and checks its health on its own listener", () => {
    const config = loadIn(serviceEnvironment(service("worker"), filledDotEnv()));
    if (config instanceof ConfigError) throw new Error(config.message);
    expect(config.temporalMetricsAddress).toBe("127.0.0.1:9464");
    expect(config.workerOperatorHost).toBe("127.0.0.1");
    expect(JSON.stringify(service("worker").healthcheck?.test)).toContain("WORKER_OPERATOR_PORT");
  });

  it("starts both processes in production mode once the secrets of .env.example are filled in", () => {
    for (const name of APP_SERVICES) {
      const config = loadIn(serviceEnvironment(service(name), filledDotEnv()));
      if (config instanceof ConfigError) throw new Error(`${name}: ${config.message}`);
      expect(config.mode, name).toBe("production");
      expect(config.databaseUrl, name).toMatch(/^postgres:\/\/mail:maildbpassword[0-9a-f]+@postgres:5432\/mail$/);
      expect(config.temporalAddress, name).toBe("temporal:7233");
      expect(config.allowVerificationOverride, name).toBe(false);
    }
  });

  it("refuses to start with .env.example as committed, naming each setting to fill in", () => {
    // Compose itself stops at the mail role's password (`${MAIL_DB_PASSWORD:?...}`).
    expect(() => serviceEnvironment(service("api"), dotEnvExample)).toThrow(/MAIL_DB_PASSWORD/);
    const withPassword = { ...dotEnvExample, MAIL_DB_PASSWORD: filledDotEnv().MAIL_DB_PASSWORD as string };
    const refused = loadIn(serviceEnvironment(service("api"), withPassword));
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems.map((line) => line.split(" ")[0])).toEqual([
      "API_KEY_PEPPER",
      "DATA_ENCRYPTION_KEY",
      "OPERATOR_TOKEN",
      "CURSOR_SECRET",
      "FORM_TOKEN_SECRET",
      "CONFIRMATION_SECRET",
      "EMAIL_PROVIDER",
      "PUBLIC_BASE_URL",
    ]);
    // The simulator is refused too, unless allowed (then every start warns).
    const simulator = { ...filledDotEnv(), EMAIL_PROVIDER: "simulator" };
    expect((loadIn(serviceEnvironment(service("api"), simulator)) as ConfigError).problems[0]).toMatch(/^EMAIL_PROVIDER=simulator/);
    const allowed = loadIn(serviceEnvironment(service("api"), { ...simulator, ALLOW_SIMULATOR_IN_PRODUCTION: "true" }));
    expect(allowed).not.toBeInstanceOf(ConfigError);
  });

  it("holds no secret: secret values come from .env by interpolation", () => {
    const secretName = /PASSWORD|PWD|SECRET|TOKEN|PEPPER|ENCRYPTION_KEY/;
    for (const [name, s] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(s.environment ?? {})) {
        if (secretName.test(variable)) expect(String(value), `${name} ${variable}`).toMatch(/^\$\{[A-Z_]+(:\?[^}]*)?\}$/);
        if (variable === "DATABASE_URL") {
          const password = /^postgres:\/\/[^:]+:([^@]*)@/.exec(String(value))?.[1];
          expect(password, `${name} DATABASE_URL`).toMatch(/^\$\{MAIL_DB_PASSWORD(:\?[^}]*)?\}$/);
        }
      }
    }
    expect(readRepoFile("docker-compose.yml")).not.toMatch(/change-?me|dev-only/i);
  });
});

describe("deploy/compose.inbound-smtp.yml", () => {
  const OVERRIDE = "deploy/compose.inbound-smtp.yml";
  const override = composeFile(OVERRIDE);
  const api = mergedService(service("api"), override.services.api ?? {});
  const withTlsDir = () => ({ ...filledDotEnv(), INBOUND_SMTP_TLS_DIR: "/etc/mail-api/inbound-smtp-tls" });

  it("is valid against the Compose Specification's JSON schema, and changes the API only", () => {
    const { $schema: _, ...schema } = JSON.parse(readRepoFile("test/deploy/compose-spec.json")) as Record<string, unknown>;
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    validate(override);
    expect(validate.errors ?? []).toEqual([]);
    expect(Object.keys(override.services)).toEqual(["api"]);
  });

  it("publishes port 25 to the API's listener, beside its HTTP port, on every address unless MAIL_SMTP_PUBLISH_ADDRESS says otherwise", () => {
    expect(api.ports).toEqual(["${MAIL_PUBLISH_ADDRESS:-127.0.0.1}:8080:8080", "${MAIL_SMTP_PUBLISH_ADDRESS:-0.0.0.0}:25:2525"]);
    const smtp = String(api.ports?.[1]);
    expect(interpolate(smtp, dotEnvExample)).toBe("0.0.0.0:25:2525");
    expect(interpolate(smtp, { MAIL_SMTP_PUBLISH_ADDRESS: "203.0.113.25" })).toBe("203.0.113.25:25:2525");
  });

  it("starts the listener in production, on the published port, with STARTTLS from the mounted directory", () => {
    const env = serviceEnvironment(api, withTlsDir());
    const config = loadIn(env);
    if (config instanceof ConfigError) throw new Error(config.message);
    expect(config.deliveryReports?.inboundSmtp).toMatchObject({
      enabled: true,
      host: "0.0.0.0",
      port: 2525,
      tlsCertFile: "/run/inbound-smtp-tls/inbound-smtp.crt",
      tlsKeyFile: "/run/inbound-smtp-tls/inbound-smtp.key",
    });
    const mount = String(api.volumes?.at(-1));
    expect(interpolate(mount, withTlsDir())).toBe("/etc/mail-api/inbound-smtp-tls:/run/inbound-smtp-tls:ro");
    // Without the directory Compose refuses to start, naming it.
    expect(() => interpolate(mount, filledDotEnv())).toThrow(/INBOUND_SMTP_TLS_DIR/);
    // Without STARTTLS, production refuses the listener: the mount is not optional.
    const { INBOUND_SMTP_TLS_CERT_FILE: _cert, INBOUND_SMTP_TLS_KEY_FILE: _key, ...withoutTls } = env;
    expect(loadIn(withoutTls)).toBeInstanceOf(ConfigError);
  });

  it("has its variables in .env.example", () => {
    const mentioned = mentionedIn(readRepoFile(".env.example"));
    expect([...interpolatedNames(readRepoFile(OVERRIDE))].filter((name) => !mentioned.has(name))).toEqual([]);
  });
});

describe(".env.example", () => {
  const text = readRepoFile(".env.example");

  it("lists every variable the service reads, and every variable docker-compose.yml interpolates", () => {
    const mentioned = mentionedIn(text);
    expect(CONFIG_VARIABLES.filter((name) => !mentioned.has(name))).toEqual([]);
    expect([...interpolatedNames(readRepoFile("docker-compose.yml"))].filter((name) => !mentioned.has(name))).toEqual([]);
  });

  it("leaves every secret empty", () => {
    for (const name of [...SECRETS, "SMTP_PASSWORD"]) {
      expect(dotEnvExample[name], name).toBe("");
    }
  });

  it("is committed, while .env is ignored by git and left out of the image", () => {
    const ignored = (path: string): boolean => {
      try {
        execFileSync("git", ["check-ignore", "-q", path], { cwd: ROOT });
        return true;
      } catch {
        return false;
      }
    };
    expect(ignored(".env")).toBe(true);
    expect(ignored(".env.example")).toBe(false);
    // .dockerignore is an allowlist: everything out, then only what the image needs back in.
    const rules = readRepoFile(".dockerignore")
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"));
    expect(rules[0]).toBe("*");
    expect(rules.slice(1).sort()).toEqual(["!package-lock.json", "!package.json", "!src/", "!tsconfig.json", "!web/", "!workflows/"]);
  });
});

describe("Dockerfile", () => {
  const stages = dockerfileStages(readRepoFile("Dockerfile"));
  const final = stages.at(-1);

  it("builds from a Node 24 base pinned to an exact release", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage.from).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/);
    const engines = (JSON.parse(readRepoFile("package.json")) as { engines: { node: string } }).engines.node;
    expect(engines).toMatch(/^>=2[24]\./);
  });

  it("installs only production dependencies in the final stage, and runs as the unprivileged node user in production mode", () => {
    const instructions = final?.instructions ?? [];
    expect(instructions).toContainEqual(expect.stringMatching(/^RUN npm ci --omit=dev\b/));
    expect(instructions).toContain("ENV NODE_ENV=production");
    const users = instructions.filter((line) => line.startsWith("USER "));
    expect(users).toEqual(["USER node"]);
    // USER before CMD: the process never runs as root.
    expect(instructions.indexOf("USER node")).toBeLessThan(instructions.findIndex((line) => line.startsWith("CMD ")));
  });

  it("runs the production API entry by default", () => {
    const cmd = final?.instructions.find((line) => line.startsWith("CMD "));
    // With the V8 memory settings the benchmark measured (bench/lib/processes.ts).
    expect(cmd).toBe(`CMD ${JSON.stringify(["node", "--disable-warning=ExperimentalWarning", ...API_NODE_FLAGS, "src/api-main.ts"]).replaceAll(",", ", ")}`);
  });
});
