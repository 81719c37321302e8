/**
 * Throw-away databases for the benchmarks, on the local PostgreSQL or the
 * server of BENCH_DATABASE_ADMIN_URL (a URL of a database to connect to for
 * CREATE/DROP DATABASE; default the trust-auth superuser on 127.0.0.1:5432).
 * Never a database anyone uses: each run makes its own and drops it.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";

export const ADMIN_URL = process.env.BENCH_DATABASE_ADMIN_URL ?? process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface ScratchDatabase {
  readonly name: string;
  readonly url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(adminUrl: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** `prefix` + random suffix; the name is only ever [a-z0-9_]. */
export async function createScratchDatabase(prefix: string, adminUrl: string = ADMIN_URL): Promise<ScratchDatabase> {
  if (!/^[a-z][a-z0-9_]*$/.test(prefix)) throw new Error(`bad database prefix ${prefix}`);
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  await withAdmin(adminUrl, (client) => client.query(`create database ${name}`));
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    name,
    url: url.toString(),
    drop: () => (dropped ??= withAdmin(adminUrl, async (client) => void (await client.query(`drop database if exists ${name} with (force)`)))),
  };
}
