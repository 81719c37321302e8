/**
 * Fails when committed generated code is not what `buf generate` makes from
 * proto/ today, so a proto change cannot land without its regenerated code.
 * Run: node scripts/check-generated.ts [template ...]
 *
 * Without arguments it checks the server's code (buf.gen.yaml: src/gen and
 * its descriptor set) and the TypeScript client's (clients/typescript).
 * With arguments, only the named buf.gen templates (the Go client's,
 * clients/go/buf.gen.yaml, needs protoc-gen-go and protoc-gen-connect-go on
 * PATH, so test/clients/go.test.ts checks it).
 *
 * buf generates into a temporary directory (`buf generate -o`, which
 * prefixes every `out:` of the template) and the result is compared byte for
 * byte with the committed files, in both directions.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Written by `npm run generate` (package.json) with `buf build`. */
const DESCRIPTOR_SET = "src/gen/mail.binpb";

/** A buf.gen template whose output is committed, and the command that regenerates it. */
interface Generation {
  readonly template: string;
  readonly regenerate: string;
  /** The descriptor set `npm run generate` writes beside the code. */
  readonly descriptorSet?: string;
}

const GENERATIONS: readonly Generation[] = [
  { template: "buf.gen.yaml", regenerate: "npm run generate", descriptorSet: DESCRIPTOR_SET },
  { template: "clients/typescript/buf.gen.yaml", regenerate: "npm run clients:generate" },
];

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The `out:` directories of a buf.gen template. A regular expression instead
 * of a YAML parser: no YAML package is a dependency of ours, and the
 * templates are ours and simple.
 */
async function outputDirs(templatePath: string): Promise<string[]> {
  const template = await readFile(path.join(root, templatePath), "utf8");
  const dirs = [...template.matchAll(/^\s*(?:-\s+)?out:\s*["']?([^"'#\s]+)["']?/gm)].map((m) => m[1] ?? "");
  const unique = [...new Set(dirs.filter((d) => d !== ""))];
  if (unique.length === 0) throw new Error(`${templatePath} names no plugin out: directory`);
  return unique;
}

/** Relative paths of all files below `dir`; empty when it does not exist. */
async function listFiles(dir: string): Promise<string[]> {
  try {
    const entries = await readdir(dir, { recursive: true, withFileTypes: true });
    return entries
      .filter((e) => e.isFile())
      .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}

/** Generates `generation` into `tmp` and lists the committed files that differ from it. */
async function differences(generation: Generation, tmp: string, env: NodeJS.ProcessEnv): Promise<string[] | undefined> {
  const bin = path.join(root, "node_modules", ".bin");
  const args = ["generate", "-o", tmp, ...(generation.template === "buf.gen.yaml" ? [] : ["--template", generation.template])];
  const buf = spawnSync(path.join(bin, "buf"), args, { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] });
  if (buf.error) throw buf.error;
  if (buf.status !== 0) {
    console.error(`buf generate${generation.template === "buf.gen.yaml" ? "" : ` --template ${generation.template}`} failed (exit ${String(buf.status ?? buf.signal)})`);
    return undefined;
  }
  if (generation.descriptorSet) {
    // The descriptor set with source comments (the OpenAPI descriptions),
    // made by `npm run generate` beside the code.
    const descriptors = spawnSync(
      path.join(bin, "buf"),
      ["build", "proto", "--as-file-descriptor-set", "-o", path.join(tmp, generation.descriptorSet)],
      { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] },
    );
    if (descriptors.status !== 0) {
      console.error(`buf build failed (exit ${String(descriptors.status ?? descriptors.signal)})`);
      return undefined;
    }
  }

  const differing: string[] = [];
  for (const out of await outputDirs(generation.template)) {
    const committedDir = path.join(root, out);
    const freshDir = path.join(tmp, out);
    const committed = await listFiles(committedDir);
    const fresh = await listFiles(freshDir);
    for (const file of new Set([...committed, ...fresh])) {
      const shown = path.join(out, file);
      if (!committed.includes(file)) {
        differing.push(`${shown} (missing: buf generates it)`);
      } else if (!fresh.includes(file)) {
        differing.push(`${shown} (stale: buf no longer generates it)`);
      } else {
        const [a, b] = await Promise.all([readFile(path.join(committedDir, file)), readFile(path.join(freshDir, file))]);
        if (!a.equals(b)) differing.push(`${shown} (content differs)`);
      }
    }
  }
  return differing;
}

async function main(templates: readonly string[]): Promise<number> {
  const generations =
    templates.length === 0
      ? GENERATIONS
      : templates.map((template) => GENERATIONS.find((g) => g.template === template) ?? { template, regenerate: "npm run clients:generate" });
  // npm run puts node_modules/.bin on PATH; a bare `node scripts/...` does
  // not, and buf needs it to find the protoc-gen-es plugin.
  const bin = path.join(root, "node_modules", ".bin");
  const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` };
  let failed = false;
  for (const generation of generations) {
    const tmp = await mkdtemp(path.join(tmpdir(), "mail-check-generated-"));
    try {
      const differing = await differences(generation, tmp, env);
      if (differing === undefined) return 1;
      if (differing.length > 0) {
        failed = true;
        console.error(`Generated code is out of date with proto/${generation.template === "buf.gen.yaml" ? "" : ` (${generation.template})`}:`);
        for (const line of differing.sort()) console.error(`  ${line}`);
        console.error(`Run \`${generation.regenerate}\` and commit the result.`);
      }
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }
  if (failed) return 1;
  console.log("Generated code is up to date.");
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
