/**
 * Fails when the committed generated code (src/gen) is not what `buf
 * generate` makes from proto/ today, so a proto change cannot land without
 * its regenerated code. Run: node scripts/check-generated.ts
 *
 * buf generates into a temporary directory (`buf generate -o`, which
 * prefixes every `out:` of buf.gen.yaml) and the result is compared byte for
 * byte with the committed files, in both directions.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** Written by `npm run generate` (package.json) with `buf build`. */
const DESCRIPTOR_SET = "src/gen/mail.binpb";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * The `out:` directories of buf.gen.yaml. A regular expression instead of a
 * YAML parser: no YAML package is a dependency of ours, and the template is
 * ours and simple.
 */
async function outputDirs(): Promise<string[]> {
  const template = await readFile(path.join(root, "buf.gen.yaml"), "utf8");
  const dirs = [...template.matchAll(/^\s*(?:-\s+)?out:\s*["']?([^"'#\s]+)["']?/gm)].map((m) => m[1] ?? "");
  const unique = [...new Set(dirs.filter((d) => d !== ""))];
  if (unique.length === 0) throw new Error("buf.gen.yaml names no plugin out: directory");
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

async function main(): Promise<number> {
  const tmp = await mkdtemp(path.join(tmpdir(), "mail-check-generated-"));
  try {
    // npm run puts node_modules/.bin on PATH; a bare `node scripts/...` does
    // not, and buf needs it to find the protoc-gen-es plugin.
    const bin = path.join(root, "node_modules", ".bin");
    const env = { ...process.env, PATH: `${bin}${path.delimiter}${process.env.PATH ?? ""}` };
    const buf = spawnSync(path.join(bin, "buf"), ["generate", "-o", tmp], {
      cwd: root,
      env,
      stdio: ["ignore", "inherit", "inherit"],
    });
    if (buf.error) throw buf.error;
    if (buf.status !== 0) {
      console.error(`buf generate failed (exit ${String(buf.status ?? buf.signal)})`);
      return 1;
    }
    // The descriptor set with source comments (the OpenAPI descriptions),
    // made by `npm run generate` beside the code.
    const descriptors = spawnSync(
      path.join(bin, "buf"),
      ["build", "proto", "--as-file-descriptor-set", "-o", path.join(tmp, DESCRIPTOR_SET)],
      { cwd: root, env, stdio: ["ignore", "inherit", "inherit"] },
    );
    if (descriptors.status !== 0) {
      console.error(`buf build failed (exit ${String(descriptors.status ?? descriptors.signal)})`);
      return 1;
    }

    const differing: string[] = [];
    for (const out of await outputDirs()) {
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

    if (differing.length > 0) {
      console.error("Generated code is out of date with proto/:");
      for (const line of differing.sort()) console.error(`  ${line}`);
      console.error("Run `npm run generate` and commit the result.");
      return 1;
    }
    console.log("Generated code is up to date.");
    return 0;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

process.exitCode = await main();
