import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../../src/config.ts";

/** Variables read outside src/config.ts, documented in the same table. */
const READ_ELSEWHERE = [
  "TEMPORAL_CLI_PATH", // src/runtime/temporal-dev-server.ts
  "MAIL_ADMIN_URL", // src/cli/mailctl.ts
  "POSTGRES_PASSWORD", // docker-compose.yml
  "MAIL_DB_PASSWORD", // docker-compose.yml, deploy/postgres-init/10-roles.sh
  "TEMPORAL_DB_PASSWORD", // docker-compose.yml, deploy/postgres-init/10-roles.sh
  "MAIL_PUBLISH_ADDRESS", // docker-compose.yml
];

/** The variable names of README's Configuration table, with each row's mode. */
function configurationTable(): Map<string, string> {
  const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## Configuration\n"), readme.indexOf("\n## ", readme.indexOf("## Configuration\n") + 1));
  const rows = new Map<string, string>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((cell) => cell.trim());
    if (cells.length < 6 || !cells[1]?.startsWith("`")) continue;
    for (const name of cells[1].matchAll(/`([A-Z0-9_]+)`/g)) rows.set(name[1] as string, cells[3] ?? "");
  }
  return rows;
}

describe("README's Configuration table", () => {
  it("documents every variable the configuration reads", () => {
    const documented = configurationTable();
    expect(CONFIG_VARIABLES.filter((name) => !documented.has(name))).toEqual([]);
  });

  it("documents nothing that is not read", () => {
    const known = new Set([...CONFIG_VARIABLES, ...READ_ELSEWHERE]);
    expect([...configurationTable().keys()].filter((name) => !known.has(name))).toEqual([]);
  });

  it("marks as required in production exactly what production refuses to start without", () => {
    let refused: string[] = [];
    try {
      loadConfig({ NODE_ENV: "production" });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      refused = error.problems.map((line) => line.split(" ")[0] as string);
    }
    const required = [...configurationTable()].filter(([, mode]) => mode === "production: required").map(([name]) => name);
    expect(required.sort()).toEqual(refused.sort());
    expect(refused).toContain("DATABASE_URL");
  });
});
