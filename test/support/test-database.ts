import { randomBytes } from "node:crypto";
import pg from "pg";

/**
 * A throw-away database on the test PostgreSQL server, one per test file,
 * so files can run in parallel without seeing each other's rows.
 * Server: TEST_DATABASE_ADMIN_URL, default the local trust-auth superuser.
 */
const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Runs one statement on a short-lived connection of its own. */
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
  drop(): Promise<void>;
}

/** The application_name of the tests' own connections (`TestDatabase.query`), as pg_stat_activity shows it. */
export const TEST_APPLICATION_NAME = "mail-tests";

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, application_name: TEST_APPLICATION_NAME });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `mail_test_${randomBytes(6).toString("hex")}`;
  await withClient(ADMIN_URL, (client) => client.query(`create database ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    query: (text, values) => withClient(url.toString(), (client) => client.query(text, values)),
    drop: async () => {
      await withClient(ADMIN_URL, (client) => client.query(`drop database if exists ${name} with (force)`));
    },
  };
}
