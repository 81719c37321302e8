/**
 * Seals every stored secret again under the current data encryption key, so
 * that an old key can be retired (docs/operations.md, "Rotating keys"):
 *
 *   node src/adapters/postgres/reseal-secrets.ts      (DATABASE_URL, DATA_ENCRYPTION_KEY(S))
 *
 * It reads the same settings as the service; run it after every process
 * has the new key list (the new key first). Each value is opened with the
 * key its id names and sealed with the first key; a value already sealed
 * with it is left alone, so running it twice changes nothing. A value that
 * no configured key opens is left as it is and reported (table and row id,
 * never a value); the exit code is then 1.
 *
 * An operator's maintenance across companies, by design: each row is
 * opened and sealed in its own company's context (company id, domain or
 * endpoint id), under a row lock, so a concurrent secret rotation is never
 * overwritten.
 */
import { fileURLToPath } from "node:url";
import { ConfigError, loadConfig } from "../../config.ts";
import { dkimSealContext } from "../../capabilities/sending-setup/domains.ts";
import { createSecretSealer, type KeyringSealer } from "../../capabilities/sending-setup/key-sealing.ts";
import { secretSealContext } from "../../capabilities/webhooks/endpoints.ts";
import { messageBodySealContext } from "./messages/message-store.ts";
import { openOrm } from "./orm.ts";
import { type Pool, poolOf } from "./sql.ts";
import { inTransaction } from "./transaction.ts";

interface SealedColumn {
  readonly table: "sending_domain" | "webhook_endpoint" | "message";
  readonly column: "dkim_private_key_sealed" | "secret_sealed" | "previous_secret_sealed" | "html" | "text_body";
  /** The context a row's value is sealed under, from its company id and its `owner` column. */
  readonly owner: "domain" | "id";
  readonly context: (companyId: string, owner: string) => string;
  /** Only the rows whose value is sealed (a column holding plain values too). */
  readonly sealedRows?: "system";
}

/** Every column that holds a sealed secret. */
const SEALED_COLUMNS: readonly SealedColumn[] = [
  { table: "sending_domain", column: "dkim_private_key_sealed", owner: "domain", context: dkimSealContext },
  { table: "webhook_endpoint", column: "secret_sealed", owner: "id", context: secretSealContext },
  { table: "webhook_endpoint", column: "previous_secret_sealed", owner: "id", context: secretSealContext },
  // The bodies of the service's own mail (sign-in links, confirmations).
  { table: "message", column: "html", owner: "id", context: messageBodySealContext, sealedRows: "system" },
  { table: "message", column: "text_body", owner: "id", context: messageBodySealContext, sealedRows: "system" },
];

export interface ResealReport {
  readonly table: string;
  readonly column: string;
  /** Values sealed again under the current key. */
  readonly resealed: number;
  /** Values sealed under it already. */
  readonly current: number;
  /** Row ids whose value no configured key opens (left unchanged). */
  readonly unopenable: readonly string[];
}

export async function resealStoredSecrets(pool: Pool | (() => Promise<Pool>), sealer: KeyringSealer): Promise<ResealReport[]> {
  const reports: ResealReport[] = [];
  for (const { table, column, owner, context, sealedRows } of SEALED_COLUMNS) {
    reports.push(
      await inTransaction(pool, async (client) => {
        const { rows } = await client.query<{ id: string; company_id: string; owner: string; sealed: string }>(
          `select id::text as id, company_id::text as company_id, ${owner}::text as owner, ${column} as sealed
             from ${table} where ${column} is not null ${sealedRows ? `and ${sealedRows}` : ""} order by id for update`,
        );
        let resealed = 0;
        let current = 0;
        const unopenable: string[] = [];
        for (const row of rows) {
          let again: string | undefined;
          try {
            again = sealer.reseal(row.sealed, context(row.company_id, row.owner));
          } catch {
            unopenable.push(row.id);
            continue;
          }
          if (again === undefined) {
            current++;
            continue;
          }
          await client.query(`update ${table} set ${column} = $1 where id = $2 and company_id = $3`, [again, row.id, row.company_id]);
          resealed++;
        }
        return { table, column, resealed, current, unopenable };
      }),
    );
  }
  return reports;
}

async function main(): Promise<number> {
  const config = loadConfig();
  if (!config.databaseUrl) throw new ConfigError(config.mode, ["DATABASE_URL is not set: the secrets to seal again are in that database"]);
  const sealer = createSecretSealer(config.dataEncryptionKey, config.dataEncryptionKeys);
  const orm = await openOrm(config.databaseUrl, { poolMax: 2 });
  try {
    const reports = await resealStoredSecrets(poolOf(orm), sealer);
    const key = sealer.sealingKeyId === null ? "the legacy key (DATA_ENCRYPTION_KEY)" : `key ${sealer.sealingKeyId}`;
    for (const r of reports) {
      console.log(`${r.table}.${r.column}: ${r.resealed} sealed again under ${key}, ${r.current} already were`);
      for (const id of r.unopenable) console.error(`${r.table}.${r.column}: row ${id} opens with no configured key (left unchanged)`);
    }
    return reports.some((r) => r.unopenable.length > 0) ? 1 : 0;
  } finally {
    await orm.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(error instanceof ConfigError ? error.message : error);
      process.exit(1);
    },
  );
}
