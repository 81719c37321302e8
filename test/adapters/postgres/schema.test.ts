import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ESLint } from "eslint";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";
import { collectSqlStatements } from "./sql-statements.ts";

/**
 * The MikroORM entities (src/adapters/postgres/entities) are the one source
 * of the schema: the migrations build exactly what they describe, new
 * migrations are generated from them (`npm run migration:create`), and the
 * raw SQL of the adapters names only tables and columns they have.
 *
 * Two databases: one migrated, one built from the entities alone. MikroORM's
 * own diff of the migrated one must be empty, but that diff does not see
 * everything (raw indexes and triggers are matched by name, a unique
 * constraint and a unique index look alike to it, a table's persistence is
 * not read), so the two databases' catalogs are compared as well.
 */

/**
 * Every table, column (type, nullability, default), constraint, index,
 * trigger and trigger function of the public schema, and the extensions, as
 * PostgreSQL prints them. Column order is left out: a column added by a later
 * migration comes last there, wherever the entity lists it.
 */
const CATALOG = `
  select 'table ' || c.relname || ' persistence ' || c.relpersistence::text || ' row security ' || c.relrowsecurity::text
         || coalesce(' comment ' || obj_description(c.oid, 'pg_class'), '') as line
    from pg_class c
   where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname <> 'mikro_orm_migrations'
  union all
  select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || case when a.attnotnull then ' not null' else ' null' end
         || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
         || case when a.attidentity <> '' then ' identity ' || a.attidentity::text else '' end
         || case when a.attgenerated <> '' then ' generated ' || a.attgenerated::text else '' end
         || coalesce(' collate ' || nullif(a.attcollation, t.typcollation)::regcollation::text, '')
         || coalesce(' comment ' || col_description(c.oid, a.attnum), '')
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid
    join pg_type t on t.oid = a.atttypid
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
   where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and c.relname <> 'mikro_orm_migrations'
     and a.attnum > 0 and not a.attisdropped
  union all
  select 'constraint ' || c.relname || ' ' || k.conname || ' ' || pg_get_constraintdef(k.oid)
    from pg_constraint k join pg_class c on c.oid = k.conrelid
   where c.relnamespace = 'public'::regnamespace and c.relname <> 'mikro_orm_migrations'
  union all
  select 'index ' || pg_get_indexdef(i.indexrelid)
    from pg_index i join pg_class c on c.oid = i.indrelid
   where c.relnamespace = 'public'::regnamespace and c.relname <> 'mikro_orm_migrations'
  union all
  select 'trigger ' || pg_get_triggerdef(t.oid)
    from pg_trigger t join pg_class c on c.oid = t.tgrelid
   where c.relnamespace = 'public'::regnamespace and not t.tgisinternal
  union all
  -- White space inside a function's body means nothing to PL/pgSQL.
  select 'function ' || trim(regexp_replace(pg_get_functiondef(p.oid), '\\s+', ' ', 'g'))
    from pg_proc p
   where p.pronamespace = 'public'::regnamespace
     and not exists (select 1 from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')
  union all
  select 'sequence ' || s.relname || ' ' || format_type(q.seqtypid, null)
    from pg_class s join pg_sequence q on q.seqrelid = s.oid
   where s.relnamespace = 'public'::regnamespace and s.relname <> 'mikro_orm_migrations_id_seq'
  union all
  select 'view ' || v.relname from pg_class v where v.relnamespace = 'public'::regnamespace and v.relkind in ('v', 'm')
  union all
  select 'extension ' || extname from pg_extension
  order by 1`;

async function catalog(db: TestDatabase): Promise<string[]> {
  return (await db.query<{ line: string }>(CATALOG)).rows.map((row) => row.line);
}

/**
 * What the migrations build that no entity can say, each with its reason
 * (and a comment in the entity concerned).
 */
const NOT_EXPRESSIBLE = {
  // MikroORM has no option for an UNLOGGED table (entities/rate-limit-window.ts);
  // its own diff does not read a table's persistence either.
  onlyMigrated: ["table rate_limit persistence u row security false"],
  onlyFromEntities: ["table rate_limit persistence p row security false"],
};

describe("the schema's one source, the entities", () => {
  let migrated: TestDatabase;
  let fromEntities: TestDatabase;
  let orm: MikroORM;

  beforeAll(async () => {
    [migrated, fromEntities] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    orm = await openOrm(migrated.url, { poolMax: 2 });
    await migrate(orm);
    // Extensions are no entity's metadata: the contacts migration creates
    // pg_trgm, which contact_search_index needs.
    await fromEntities.query("create extension if not exists pg_trgm");
    const entityOrm = await openOrm(fromEntities.url, { poolMax: 2 });
    try {
      await entityOrm.schema.create();
    } finally {
      await entityOrm.close();
    }
  });

  afterAll(async () => {
    await orm?.close();
    await Promise.all([migrated?.drop(), fromEntities?.drop()]);
  });

  it("leaves MikroORM's schema diff empty after the migrations ran", async () => {
    expect(await orm.schema.getUpdateSchemaSQL({ wrap: false })).toBe("");
  });

  it("builds, from the entities alone, what the migrations build", async () => {
    const [byMigrations, byEntities] = await Promise.all([catalog(migrated), catalog(fromEntities)]);
    expect({
      onlyMigrated: byMigrations.filter((line) => !byEntities.includes(line)),
      onlyFromEntities: byEntities.filter((line) => !byMigrations.includes(line)),
    }).toEqual(NOT_EXPRESSIBLE);
  });

  it("writes the entities' diff as the next migration, in the style of the others (npm run migration:create)", async () => {
    const db = await createTestDatabase();
    const folder = mkdtempSync(path.join(tmpdir(), "migrations-"));
    const drifted = await openOrm(db.url, { poolMax: 2 });
    try {
      await migrate(drifted);
      // The entities have what this database lacks: a column and an index.
      await db.query("drop index message_unstarted_index; alter table message drop column handoff_until");

      const { fileName, code, diff } = await drifted.migrator.create(folder, false, false, "handoff_lease_again");

      expect(fileName).toMatch(/^Migration\d{14}_handoff_lease_again\.ts$/);
      expect(code).toContain(`export class ${fileName.replace(/\.ts$/, "")} extends Migration {`);
      expect(code).toContain(`this.addSql(\`alter table "message" add "handoff_until" timestamptz null\`);`);
      const root = path.resolve(import.meta.dirname, "../../..");
      const filePath = path.join(root, "src/adapters/postgres/migrations", fileName);
      const [lint] = await new ESLint({ cwd: root }).lintText(code, { filePath });
      expect(lint?.messages).toEqual([]);
      await db.query(diff.up.join("\n"));
      expect(await drifted.schema.getUpdateSchemaSQL({ wrap: false })).toBe("");
    } finally {
      await drifted.close();
      await db.drop();
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it("has every table and column the adapters' SQL names: PostgreSQL prepares each statement on the entities' database", async () => {
    // The metrics adapter's gauges read the message log too.
    const statements = collectSqlStatements(["src/adapters/postgres", "src/adapters/metrics"], ["entities", "migrations"]);
    expect(statements.length).toBeGreaterThan(0);
    const client = new pg.Client({ connectionString: fromEntities.url });
    await client.connect();
    const refused: string[] = [];
    try {
      let n = 0;
      for (const { at, variants } of statements) {
        for (const text of variants) {
          try {
            // PREPARE parses the statement and resolves every name in it
            // (CTEs, ON CONFLICT targets, jsonb operators included) without running it.
            await client.query(`prepare checked_${n++} as ${text}`);
          } catch (error) {
            const { code, message } = error as pg.DatabaseError;
            // 42P18: a parameter whose type nothing decides; raised once every name has been resolved.
            if (code !== "42P18") refused.push(`${at}: ${message} (${code})\n${text}`);
          }
        }
      }
    } finally {
      await client.end();
    }
    expect(refused).toEqual([]);
  });
});
