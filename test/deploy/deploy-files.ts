/**
 * Reading the deployment files as Docker Compose and Docker would: the
 * compose file with YAML merge keys, `${VAR}` interpolation from .env, env
 * files in dotenv syntax, and the Dockerfile's stages.
 */
import { readFileSync } from "node:fs";
import { parseEnv } from "node:util";
import { parse } from "yaml";

export const ROOT = new URL("../../", import.meta.url);

export function readRepoFile(path: string): string {
  return readFileSync(new URL(path, ROOT), "utf8");
}

export interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  env_file?: string | (string | { path: string; required?: boolean })[];
  ports?: (string | { published?: string; host_ip?: string })[];
  expose?: unknown[];
  network_mode?: string;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: (string | { type?: string; source?: string; target?: string })[];
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** docker-compose.yml (or an override file) as Compose reads it, before interpolation (merge keys resolved). */
export function composeFile(path = "docker-compose.yml"): ComposeFile {
  return parse(readRepoFile(path), { merge: true }) as ComposeFile;
}

/**
 * A service of an override file laid over the base's, by Compose's merge
 * rules for the fields used here: `environment` merged by name (the
 * override wins), `ports` and `volumes` appended, anything else replaced.
 */
export function mergedService(base: ComposeService, override: ComposeService): ComposeService {
  return {
    ...base,
    ...override,
    environment: { ...base.environment, ...override.environment },
    ports: [...(base.ports ?? []), ...(override.ports ?? [])],
    volumes: [...(base.volumes ?? []), ...(override.volumes ?? [])],
  };
}

/** `NAME=value` lines of an env file (comments and blank lines skipped). */
export function envFile(path: string): Record<string, string> {
  return parseEnv(readRepoFile(path)) as Record<string, string>;
}

/** Every variable an env file mentions, set or in a comment (`# NAME=`). */
export function mentionedIn(text: string): Set<string> {
  return new Set([...text.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((match) => match[1] as string));
}

/** The variables a compose file interpolates (`${NAME}`, `${NAME:-x}`, `${NAME:?x}`). */
export function interpolatedNames(text: string): Set<string> {
  return new Set([...text.replaceAll("$$", "").matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)].map((match) => match[1] as string));
}

/**
 * Compose's interpolation of one value: `${NAME}`, `${NAME:-default}`,
 * `${NAME-default}`, `${NAME:?error}`, `${NAME?error}`, and `$$` for `$`.
 */
export function interpolate(value: string, vars: Record<string, string | undefined>): string {
  return value.replace(/\$\$|\$\{([A-Z_][A-Z0-9_]*)(?:(:?)([-?])([^}]*))?\}/g, (whole, name?: string, colon?: string, op?: string, arg?: string) => {
    if (whole === "$$") return "$";
    const raw = vars[name as string];
    const missing = colon === ":" ? raw === undefined || raw === "" : raw === undefined;
    if (op === "-") return missing ? (arg ?? "") : (raw as string);
    if (op === "?" && missing) throw new Error(`compose would refuse: ${name}: ${arg}`);
    return raw ?? "";
  });
}

/** The environment a service's process gets: its env files, then `environment` (which wins), interpolated. */
export function serviceEnvironment(service: ComposeService, dotEnv: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const files = service.env_file === undefined ? [] : Array.isArray(service.env_file) ? service.env_file : [service.env_file];
  for (const file of files) {
    const path = typeof file === "string" ? file : file.path;
    if (path !== ".env") throw new Error(`unexpected env file ${path}`);
    Object.assign(env, dotEnv);
  }
  for (const [name, value] of Object.entries(service.environment ?? {})) {
    env[name] = interpolate(value === null ? "" : String(value), dotEnv);
  }
  return env;
}

export interface DockerfileStage {
  readonly from: string;
  readonly name: string | undefined;
  /** Instructions after FROM, continuation lines joined. */
  readonly instructions: readonly string[];
}

export function dockerfileStages(text: string): DockerfileStage[] {
  const lines = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
  const stages: { from: string; name: string | undefined; instructions: string[] }[] = [];
  for (const line of lines) {
    const from = /^FROM\s+(?:--platform=\S+\s+)?(\S+)(?:\s+AS\s+(\S+))?$/i.exec(line);
    if (from) stages.push({ from: from[1] as string, name: from[2], instructions: [] });
    else stages.at(-1)?.instructions.push(line);
  }
  return stages;
}
