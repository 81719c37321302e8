import { MikroORM } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { ENTITIES } from "./entities/index.ts";
import { MIGRATIONS } from "./migrations/index.ts";
import { pgPool } from "./sql.ts";

export { MikroORM } from "@mikro-orm/postgresql";

export interface OpenOrmOptions {
  /** Largest number of pooled connections of this process. Default 10. */
  readonly poolMax?: number;
}

/**
 * Opens the ORM on `databaseUrl` (`postgres://user:pass@host:port/db`).
 * The schema is never synchronised here: it only changes through
 * `migrate()`. Use `orm.em.fork()` per unit of work; the global
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
    // Fail fast instead of queueing forever when the database is unreachable.
    driverOptions: { connectionTimeoutMillis: 10_000 },
    migrations: {
      migrationsList: [...MIGRATIONS],
      tableName: "mikro_orm_migrations",
      // Migrations are hand-written: no schema snapshot files, no diffing.
      snapshot: false,
      snapshotOnMigrate: false,
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
