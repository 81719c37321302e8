import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { CONFIG_VARIABLES, ConfigError, loadConfig } from "../../src/config.ts";
import { variableDoc } from "../../src/config/env-schema.ts";
import { REFERENCE_PAGE, withCurrentReference } from "../../scripts/print-config-reference.ts";

/**
 * docs/configuration.md is generated from src/config/env-schema.ts by
 * scripts/print-config-reference.ts; these tests keep the page and the
 * schema saying the same thing.
 */
describe("the configuration reference (docs/configuration.md)", () => {
  it("is what scripts/print-config-reference.ts makes from the schema today (else run it with --write)", () => {
    const page = readFileSync(REFERENCE_PAGE, "utf8");
    expect(page).toBe(withCurrentReference(page));
  });

  it("lists every variable the configuration reads, each with a description", () => {
    const page = readFileSync(REFERENCE_PAGE, "utf8");
    for (const name of CONFIG_VARIABLES) {
      expect(variableDoc(name).description, name).not.toBe("");
      expect(page, name).toContain(`| \`${name}\` |`);
    }
  });

  it("marks as required in production exactly what production refuses to start without", () => {
    let refused: string[] = [];
    try {
      loadConfig({ NODE_ENV: "production" });
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      refused = error.problems.map((line) => line.split(" ")[0] as string);
    }
    const required = CONFIG_VARIABLES.filter((name) => variableDoc(name).requiredInProduction === true);
    expect([...required].sort()).toEqual([...refused].sort());
    expect(refused).toContain("DATABASE_URL");
  });
});
