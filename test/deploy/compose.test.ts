/**
 * The deployment files, checked without a Docker engine: docker-compose.yml
 * against the Compose Specification's JSON schema (vendored, see README.md
 * here) and against what the service needs; the Dockerfile; .env.example;
 * what git and the build context leave out.
 */
import { execFileSync } from "node:child_process";
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
  readRepoFile,
  ROOT,
  serviceEnvironment,
} from "./deploy-files.ts";

const compose = composeFile();
const services = compose.services;
const APP_SERVICES = ["api", "worker"] as const;
const dotEnvExample = envFile(".env.example");

/** .env.example as an operator fills it in: every empty secret set to a random-looking value. */
function filledDotEnv(): Record<string, string> {
  const filled: Record<string, string> = { ...dotEnvExample };
  for (const name of ["POSTGRES_PASSWORD", "API_KEY_PEPPER", "DATA_ENCRYPTION_KEY", "OPERATOR_TOKEN", "CURSOR_SECRET"]) {
    filled[name] = `${name.toLowerCase().replaceAll("_", "")}0123456789abcdef0123456789abcdef`;
  }
  return filled;
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
      expect(config.databaseUrl, name).toMatch(/^postgres:\/\/mail:postgrespassword[0-9a-f]+@postgres:5432\/mail$/);
      expect(config.temporalAddress, name).toBe("temporal:7233");
      expect(config.allowVerificationOverride, name).toBe(false);
    }
  });

  it("refuses to start with .env.example as committed, naming each secret to fill in", () => {
    // Compose itself stops at the PostgreSQL password (`${POSTGRES_PASSWORD:?...}`).
    expect(() => serviceEnvironment(service("api"), dotEnvExample)).toThrow(/POSTGRES_PASSWORD/);
    const withPassword = { ...dotEnvExample, POSTGRES_PASSWORD: filledDotEnv().POSTGRES_PASSWORD as string };
    const refused = loadIn(serviceEnvironment(service("api"), withPassword));
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).problems.map((line) => line.split(" ")[0])).toEqual([
      "API_KEY_PEPPER",
      "DATA_ENCRYPTION_KEY",
      "OPERATOR_TOKEN",
    ]);
  });

  it("holds no secret: secret values come from .env by interpolation", () => {
    const secretName = /PASSWORD|PWD|SECRET|TOKEN|PEPPER|ENCRYPTION_KEY/;
    for (const [name, s] of Object.entries(services)) {
      for (const [variable, value] of Object.entries(s.environment ?? {})) {
        if (secretName.test(variable)) expect(String(value), `${name} ${variable}`).toMatch(/^\$\{[A-Z_]+(:\?[^}]*)?\}$/);
        if (variable === "DATABASE_URL") {
          const password = /^postgres:\/\/[^:]+:([^@]*)@/.exec(String(value))?.[1];
          expect(password, `${name} DATABASE_URL`).toMatch(/^\$\{POSTGRES_PASSWORD(:\?[^}]*)?\}$/);
        }
      }
    }
    expect(readRepoFile("docker-compose.yml")).not.toMatch(/change-?me|dev-only/i);
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
    for (const name of ["POSTGRES_PASSWORD", "API_KEY_PEPPER", "DATA_ENCRYPTION_KEY", "OPERATOR_TOKEN", "CURSOR_SECRET", "SMTP_PASSWORD"]) {
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
    expect(rules.slice(1).sort()).toEqual(["!package-lock.json", "!package.json", "!src/", "!tsconfig.json", "!workflows/"]);
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
