/**
 * Migrations from the command line:
 *
 *   npm run migration:create -- <name>           the next migration, generated from the entities
 *   npm run migration:create -- <name> --blank   an empty one, for a change of data
 *   node src/adapters/postgres/migrate.ts up     apply pending migrations (DATABASE_URL)
 *   node src/adapters/postgres/migrate.ts pending
 *
 * The schema has one source, the MikroORM entities (./entities). To change
 * it, change the entity, then run `npm run migration:create -- <name>`. On
 * the server of DATABASE_URL (its role needs CREATEDB) it makes a scratch
 * database, applies every migration listed in ./migrations/index.ts, asks
 * MikroORM's Migrator for the diff between the entities and that database,
 * writes it as ./migrations/Migration<timestamp>_<name>.ts (up and down),
 * lists it at the end of ./migrations/index.ts and drops the scratch
 * database. Read the statements, write the migration's doc comment (what
 * and why), and run test/adapters/postgres/schema.test.ts: it fails while
 * the entities and the migrations disagree in anything PostgreSQL's
 * catalog shows.
 *
 * A migration that shipped is history: never edit one, add the next. The
 * Migrator's diff matches an index or trigger written as raw DDL in an
 * entity by name only, and cannot say at all what MikroORM has no words for
 * (UNLOGGED tables, extensions): change such a thing under a new name, or
 * write it by hand in a --blank migration; the schema test tells either way.
 * It compares check constraints as text, so an entity's check is written as
 * PostgreSQL prints it back (`a >= 0 AND a <= 9`, not `a between 0 and 9`),
 * or the diff never settles.
 *
 * The service applies pending migrations at startup through `migrate()`
 * (./orm.ts).
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { loadConfig } from "../../config.ts";
import { migrationSource } from "./migrations/generator.ts";
import { migrate, openOrm, sslFromUrl } from "./orm.ts";

const MIGRATIONS_FOLDER = path.join(import.meta.dirname, "migrations");
const USAGE = "usage: npm run migration:create -- <name> [--blank]   (name: lower case letters, digits and _)";

function databaseUrl(): string {
  const url = loadConfig().databaseUrl;
  if (!url) throw new Error("DATABASE_URL is not set");
  return url;
}

async function withOrm(url: string, run: (orm: Awaited<ReturnType<typeof openOrm>>) => Promise<void>): Promise<void> {
  const orm = await openOrm(url, { poolMax: 2 });
  try {
    await run(orm);
  } finally {
    await orm.close();
  }
}

/** Runs `work` on a database of its own on `serverUrl`'s server, dropped afterwards whatever happens. */
async function withScratchDatabase(serverUrl: string, work: (url: string) => Promise<void>): Promise<void> {
  const name = `mail_migration_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: serverUrl, ...sslFromUrl(serverUrl) });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    try {
      const url = new URL(serverUrl);
      url.pathname = `/${name}`;
      await work(url.toString());
    } finally {
      await admin.query(`drop database if exists ${name} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

/** The timestamp MikroORM's generator puts in a migration's name (UTC, to the second). */
function timestamp(date: Date): string {
  return date.toISOString().replace(/[-T:]|\.\d{3}Z$/g, "");
}

/** Adds the migration to the end of MIGRATIONS in migrations/index.ts; false when the file's shape is not the expected one. */
function register(className: string): boolean {
  const file = path.join(MIGRATIONS_FOLDER, "index.ts");
  const source = readFileSync(file, "utf8");
  const lastImport = [...source.matchAll(/^import \{ Migration\w+ \} from "\.\/Migration\w+\.ts";\n/gm)].at(-1);
  const listStart = source.indexOf("export const MIGRATIONS");
  const listEnd = listStart < 0 ? -1 : source.indexOf("\n];", listStart);
  if (!lastImport || listEnd < 0) return false;
  const afterImports = lastImport.index + lastImport[0].length;
  writeFileSync(
    file,
    source.slice(0, afterImports) +
      `import { ${className} } from "./${className}.ts";\n` +
      source.slice(afterImports, listEnd + 1) +
      `  { name: "${className}", class: ${className} },\n` +
      source.slice(listEnd + 1),
  );
  return true;
}

async function create(name: string | undefined, blank: boolean): Promise<void> {
  if (!name || !/^[a-z][a-z0-9_]*$/.test(name)) throw new Error(USAGE);
  let className: string;
  if (blank) {
    className = `Migration${timestamp(new Date())}_${name}`;
    const file = path.join(MIGRATIONS_FOLDER, `${className}.ts`);
    if (existsSync(file)) throw new Error(`${file} exists already`);
    writeFileSync(file, migrationSource(className, { up: [], down: [] }, true));
  } else {
    let generated = "";
    await withScratchDatabase(databaseUrl(), (url) =>
      withOrm(url, async (orm) => {
        await migrate(orm);
        generated = (await orm.migrator.create(MIGRATIONS_FOLDER, false, false, name)).fileName;
      }),
    );
    if (!generated) {
      console.log("The entities and the migrations agree: there is nothing to generate.");
      return;
    }
    className = path.basename(generated, ".ts");
  }
  console.log(`wrote src/adapters/postgres/migrations/${className}.ts`);
  if (register(className)) {
    console.log("and listed it at the end of MIGRATIONS in src/adapters/postgres/migrations/index.ts.");
  } else {
    console.log("Now import it in src/adapters/postgres/migrations/index.ts and add to the end of MIGRATIONS:");
    console.log(`  { name: "${className}", class: ${className} },`);
  }
  console.log("Read its statements, say in its doc comment what it changes and why, and run");
  console.log("  npx vitest run test/adapters/postgres/schema.test.ts");
}

const [command = "up", ...args] = process.argv.slice(2);
try {
  if (command === "create") {
    await create(
      args.find((a) => !a.startsWith("--")),
      args.includes("--blank"),
    );
  } else if (command === "up") {
    await withOrm(databaseUrl(), async (orm) => {
      const applied = await migrate(orm);
      console.log(applied.length === 0 ? "database is up to date" : `applied: ${applied.join(", ")}`);
    });
  } else if (command === "pending") {
    await withOrm(databaseUrl(), async (orm) => {
      const pending = await orm.migrator.getPending();
      console.log(pending.length === 0 ? "nothing pending" : pending.map((m) => m.name).join("\n"));
    });
  } else {
    throw new Error(`unknown command "${command}" (up, pending, create <name> [--blank])`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
