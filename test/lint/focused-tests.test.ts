import path from "node:path";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

/**
 * `npm test` lints before it runs vitest, so a stray `.only` fails the run
 * instead of silently shrinking the suite to one test (vitest itself refuses
 * `.only` only when CI is set). Each deliberate `.only` below, linted as if it
 * were a test file, is reported; the same code without it is not.
 */
const ROOT = path.resolve(import.meta.dirname, "../..");
const eslint = new ESLint({ cwd: ROOT });

async function focusedTestErrors(code: string, file = "test/api/example.test.ts"): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return (result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-syntax" && /focused/i.test(m.message)).map((m) => m.message);
}

const header = `import { describe, expect, it, test } from "vitest";\n`;

describe("no focused tests (eslint)", () => {
  it.each([
    ["describe.only", `describe.only("x", () => { it("y", () => { expect(1).toBe(1); }); });`],
    ["it.only", `describe("x", () => { it.only("y", () => { expect(1).toBe(1); }); });`],
    ["test.only", `test.only("y", () => { expect(1).toBe(1); });`],
    ["it.concurrent.only", `it.concurrent.only("y", () => { expect(1).toBe(1); });`],
    ["describe.skipIf(...).only", `describe.skipIf(false).only("x", () => { it("y", () => { expect(1).toBe(1); }); });`],
  ])("%s is an error", async (_what, body) => {
    expect(await focusedTestErrors(`${header}${body}\n`)).toHaveLength(1);
  });

  it("the same tests without .only pass the lint", async () => {
    const body = `describe("x", () => { it("y", () => { expect(1).toBe(1); }); test("z", () => { expect(2).toBe(2); }); });`;
    expect(await focusedTestErrors(`${header}${body}\n`)).toEqual([]);
  });

  it("applies to helpers under test/ and bench/ as well", async () => {
    expect(await focusedTestErrors(`${header}it.only("y", () => {});\n`, "bench/example.ts")).toHaveLength(1);
  });

  it("keeps the erasable-syntax rules in test files", async () => {
    const [result] = await eslint.lintText("enum Colour { Red }\nexport const c = Colour.Red;\n", { filePath: path.join(ROOT, "test/api/example.test.ts") });
    expect((result?.messages ?? []).filter((m) => m.ruleId === "no-restricted-syntax")).toHaveLength(1);
  });
});
