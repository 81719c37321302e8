/**
 * Migrations from the command line:
 *
 *   node src/persistence/migrate.ts up               apply pending migrations (DATABASE_URL)
 *   node src/persistence/migrate.ts pending          list pending migrations (DATABASE_URL)
 *   node src/persistence/migrate.ts create <name>    write a blank migration file
 *
 * The service itself applies migrations at startup through `migrate()`
 * (./orm.ts); this is for operators and for writing new migrations.
 */
import { existsSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadConfig } from "../../config.ts";
import { migrate, openOrm } from "./orm.ts";

function timestamp(date: Date): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

function create(name: string | undefined): void {
  if (!name || !/^[a-z][a-z0-9_]*$/.test(name)) {
    throw new Error("usage: migrate.ts create <name>   (name: lower case letters, digits and _)");
  }
  const className = `Migration${timestamp(new Date())}_${name}`;
  const file = fileURLToPath(new URL(`./migrations/${className}.ts`, import.meta.url));
  if (existsSync(file)) throw new Error(`${file} exists already`);
  writeFileSync(
    file,
    `import { Migration } from "@mikro-orm/migrations";

/** TODO: what this migration changes, and why. */
export class ${className} extends Migration {
  override up(): void {
    this.addSql(\`\`);
  }

  override down(): void {
    this.addSql(\`\`);
  }
}
`,
  );
  console.log(`wrote ${file}`);
  console.log(`now add it to the end of MIGRATIONS in src/persistence/migrations/index.ts:`);
  console.log(`  { name: "${className}", class: ${className} },`);
}

async function withOrm(run: (orm: Awaited<ReturnType<typeof openOrm>>) => Promise<void>): Promise<void> {
  const url = loadConfig().databaseUrl;
  if (!url) throw new Error("DATABASE_URL is not set");
  const orm = await openOrm(url, { poolMax: 2 });
  try {
    await run(orm);
  } finally {
    await orm.close();
  }
}

const [command = "up", arg] = process.argv.slice(2);
try {
  if (command === "create") {
    create(arg);
  } else if (command === "up") {
    await withOrm(async (orm) => {
      const applied = await migrate(orm);
      console.log(applied.length === 0 ? "database is up to date" : `applied: ${applied.join(", ")}`);
    });
  } else if (command === "pending") {
    await withOrm(async (orm) => {
      const pending = await orm.migrator.getPending();
      console.log(pending.length === 0 ? "nothing pending" : pending.map((m) => m.name).join("\n"));
    });
  } else {
    throw new Error(`unknown command "${command}" (up, pending, create <name>)`);
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  process.exitCode = 1;
}
