import { readFileSync } from "node:fs";
import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { ENTITIES } from "./entities/index.ts";
import { ProjectMigrationGenerator } from "./migrations/generator.ts";
import { MIGRATIONS } from "./migrations/index.ts";
import { pgPool } from "./sql.ts";

export { MikroORM } from "@mikro-orm/postgresql";

export interface OpenOrmOptions {
  /** Largest number of pooled connections of this process. Default 10. */
  readonly poolMax?: number;
  /**
   * Longest a statement may run (PostgreSQL `statement_timeout`), in
   * milliseconds; 0 turns it off. Default 30 000.
   */
  readonly statementTimeoutMs?: number;
  /** Longest wait for a pooled connection before failing (503 at the API). Default 5 000. */
  readonly acquireTimeoutMs?: number;
}

/**
 * Opens the ORM on `databaseUrl` (`postgres://user:pass@host:port/db`).
 * The schema is never synchronised here: it only changes through
 * `migrate()`, whose migrations are generated from the entities (migrate.ts). Use `orm.em.fork()` per unit of work; the global
 * EntityManager is refused (allowGlobalContext stays false).
 */
export async function openOrm(databaseUrl: string, options: OpenOrmOptions = {}): Promise<MikroORM> {
  return MikroORM.init({
    clientUrl: databaseUrl,
    entities: [...ENTITIES],
    extensions: [Migrator],
    debug: false,
    // A missing database is a deployment error; do not create one silently.
    ensureDatabase: false,
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    // Fail fast instead of queueing forever when the pool is exhausted or the
    // database unreachable, and bound every statement: a saturated database
    // answers 503 (adapters/postgres/unavailable.ts), never hangs a request.
    driverOptions: {
      connectionTimeoutMillis: options.acquireTimeoutMs ?? 5_000,
      statement_timeout: options.statementTimeoutMs ?? 30_000,
      ...sslFromUrl(databaseUrl),
    },
    migrations: {
      migrationsList: [...MIGRATIONS],
      tableName: "mikro_orm_migrations",
      // A new migration is the diff between the entities and a database the
      // listed migrations built (migrate.ts create), never a snapshot file.
      snapshot: false,
      snapshotOnMigrate: false,
      generator: ProjectMigrationGenerator,
      transactional: true,
      allOrNothing: true,
      silent: true,
    },
  });
}

/** Any number well away from other advisory locks of the application. */
const MIGRATION_LOCK_KEY = 7_236_001;

/**
 * Applies the pending migrations, in order, all in one transaction; returns
 * the names applied (empty when the database was up to date). Several
 * processes starting together serialise on an advisory lock, so each
 * migration runs once.
 */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const pool = await pgPool(orm);
  // The lock is held on a connection of its own; the migrator uses others.
  const lockClient = await pool.connect();
  try {
    await lockClient.query("select pg_advisory_lock($1)", [MIGRATION_LOCK_KEY]);
    try {
      const applied = await orm.migrator.up();
      return applied.map((m) => m.name);
    } finally {
      await lockClient.query("select pg_advisory_unlock($1)", [MIGRATION_LOCK_KEY]);
    }
  } finally {
    lockClient.release();
  }
}

/**
 * TLS settings from the URL's libpq-style parameters, which MikroORM does
 * not pass on by itself (managed PostgreSQL needs them): `sslmode`
 * (`disable`, `prefer`/`require`: encrypted; `verify-ca`/`verify-full`:
 * encrypted and verified) and `sslrootcert` (a CA file), or `ssl=true`.
 */
export function sslFromUrl(databaseUrl: string): { ssl?: { rejectUnauthorized: boolean; ca?: string; checkServerIdentity?: () => undefined } } {
  const params = new URL(databaseUrl).searchParams;
  const mode = params.get("sslmode") ?? (params.get("ssl") === "true" ? "require" : undefined);
  if (!mode || mode === "disable" || mode === "allow") return {};
  const verify = mode === "verify-ca" || mode === "verify-full";
  const rootCert = params.get("sslrootcert");
  return {
    ssl: {
      rejectUnauthorized: verify,
      ...(rootCert ? { ca: readFileSync(rootCert, "utf8") } : {}),
      // verify-ca checks the chain but not the host name.
      ...(mode === "verify-ca" ? { checkServerIdentity: () => undefined } : {}),
    },
  };
}
