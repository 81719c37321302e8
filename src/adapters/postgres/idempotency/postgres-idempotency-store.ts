import { ERROR_CODES, type ErrorCodeName } from "../../../contract/api-error.ts";
import type { Pool } from "../sql.ts";
import type { IdempotencyStore } from "../../../capabilities/idempotency/ports.ts";
import type { ClaimResult, ExistingRecord, IdempotencyScope, StoredAnswer } from "../../../capabilities/idempotency/types.ts";

export interface PostgresIdempotencyStoreOptions {
  /** How long the first answer is kept (config.idempotencyWindowHours; spec: 24). */
  readonly windowHours: number;
  /** Background deletion of expired records; 0 disables. Default 60 000. */
  readonly cleanupEveryMs?: number;
  /** Failures of the background cleanup. Default: console.error. */
  readonly onCleanupError?: (error: unknown) => void;
}

/**
 * Idempotency records in PostgreSQL (table `idempotency_record`), shared by
 * every API process on the database. Each step is one statement, so no
 * transaction spans the handler's run:
 *
 * - the claim is `INSERT ... ON CONFLICT DO NOTHING` (of concurrent
 *   identical requests exactly one inserts);
 * - an expired record is taken over with an `UPDATE` whose WHERE re-checks
 *   the condition on the latest row version, so of concurrent takeovers
 *   exactly one matches;
 * - otherwise the record is read and reported.
 *
 * `expires_at` is the one clock of a record: while the claim is in
 * progress it is the end of the claim's lease (the request deadline plus a
 * margin), once answered the end of the window. A request that dies before
 * it can answer or drop its claim (a crash, the database gone under it)
 * thus locks the key until its lease ends, not for the window.
 *
 * The claim's token is its `created_at` (a takeover sets a new one), so a
 * request whose claim was taken over cannot store or drop the new owner's
 * record. Times are the database's, so processes with different clocks agree.
 */
const INSERT_CLAIM = {
  name: "idempotency_insert_claim",
  text: `insert into idempotency_record (api_key_id, idempotency_key, rpc, request_hash, state, created_at, expires_at)
         values ($1, $2, $3, $4, 'in_progress', now(), now() + $5::float8 * interval '1 second')
         on conflict (api_key_id, idempotency_key) do nothing
         returning created_at::text as token`,
};

const TAKE_OVER = {
  name: "idempotency_take_over",
  text: `update idempotency_record
            set rpc = $3, request_hash = $4, state = 'in_progress',
                response = null, response_headers = null, error_code = null, error_message = null,
                created_at = now(), expires_at = now() + $5::float8 * interval '1 second'
          where api_key_id = $1 and idempotency_key = $2 and expires_at < now()
          returning created_at::text as token`,
};

const INSPECT = {
  name: "idempotency_inspect",
  text: `select rpc, request_hash, state, response, response_headers, error_code, error_message,
                expires_at < now() as reclaimable,
                greatest(1, ceil(extract(epoch from expires_at - now())))::int as lease_seconds_left
           from idempotency_record
          where api_key_id = $1 and idempotency_key = $2`,
};

const COMPLETE = {
  name: "idempotency_complete",
  text: `update idempotency_record
            set state = 'completed', response = $4, response_headers = $5::jsonb, error_code = $6, error_message = $7,
                expires_at = now() + $8::float8 * interval '1 hour'
          where api_key_id = $1 and idempotency_key = $2 and state = 'in_progress' and created_at = $3::timestamptz`,
};

const RELEASE = {
  name: "idempotency_release",
  text: `delete from idempotency_record
          where api_key_id = $1 and idempotency_key = $2 and state = 'in_progress' and created_at = $3::timestamptz`,
};

interface TokenRow {
  token: string;
}

interface RecordRow {
  rpc: string;
  request_hash: Buffer;
  state: "in_progress" | "completed";
  response: Buffer | null;
  response_headers: Record<string, string> | string | null;
  error_code: string | null;
  error_message: string | null;
  reclaimable: boolean;
  /** Seconds until expires_at (at least 1): the lease of an in-progress claim. */
  lease_seconds_left: number;
}

function headersOf(value: RecordRow["response_headers"]): Record<string, string> {
  if (value === null) return {};
  // jsonb arrives parsed from a plain pg pool; a pool with other type parsers may hand over text.
  return typeof value === "string" ? (JSON.parse(value) as Record<string, string>) : value;
}

function isErrorCodeName(code: string): code is ErrorCodeName {
  return ERROR_CODES.has(code as ErrorCodeName);
}

function answerOf(row: RecordRow): StoredAnswer {
  const headers = headersOf(row.response_headers);
  if (row.error_code !== null) {
    if (!isErrorCodeName(row.error_code)) throw new Error(`idempotency record holds unknown error code ${row.error_code}`);
    return { kind: "error", code: row.error_code, message: row.error_message ?? "", headers };
  }
  if (row.response === null) throw new Error("completed idempotency record holds neither a response nor an error");
  return { kind: "response", response: new Uint8Array(row.response), headers };
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

export class PostgresIdempotencyStore implements IdempotencyStore {
  readonly #pool: () => Promise<Pool>;
  readonly #windowHours: number;
  readonly #onCleanupError: (error: unknown) => void;
  #timer: NodeJS.Timeout | undefined;
  #cleanup: Promise<unknown> = Promise.resolve();
  #cleaning = false;

  constructor(pool: () => Promise<Pool>, options: PostgresIdempotencyStoreOptions) {
    if (!(options.windowHours >= 0)) throw new Error(`idempotency window must be >= 0 hours, got ${options.windowHours}`);
    this.#pool = pool;
    this.#windowHours = options.windowHours;
    this.#onCleanupError = options.onCleanupError ?? ((error) => console.error("idempotency cleanup failed", error));
    const every = options.cleanupEveryMs ?? 60_000;
    if (every > 0) {
      this.#timer = setInterval(() => this.#cleanupInBackground(), every);
      // Never keeps the process alive on its own.
      this.#timer.unref();
    }
  }

  async claim(scope: IdempotencyScope, leaseSeconds: number): Promise<ClaimResult> {
    if (!(leaseSeconds > 0)) throw new Error(`idempotency lease must be > 0 seconds, got ${leaseSeconds}`);
    const pool = await this.#pool();
    const hash = Buffer.from(scope.requestHash);
    const claimValues = [scope.apiKeyId, scope.key, scope.rpc, hash, leaseSeconds];
    // A record can vanish between the statements (released by its owner,
    // deleted by the cleanup): then claiming starts over. Twice is plenty;
    // a third miss means heavy churn on this key and "in progress" is a
    // fair answer (the caller polls and comes back).
    for (let attempt = 0; attempt < 3; attempt++) {
      const inserted = await pool.query<TokenRow>({ ...INSERT_CLAIM, values: claimValues });
      if (inserted.rows[0]) return { kind: "claimed", token: inserted.rows[0].token };

      const taken = await pool.query<TokenRow>({ ...TAKE_OVER, values: claimValues });
      if (taken.rows[0]) return { kind: "claimed", token: taken.rows[0].token };

      const existing = await this.inspect(scope);
      if (existing.kind !== "absent") return existing;
    }
    return { kind: "in_progress", leaseSecondsLeft: 1 };
  }

  async inspect(scope: IdempotencyScope): Promise<ExistingRecord | { readonly kind: "absent" }> {
    const pool = await this.#pool();
    const { rows } = await pool.query<RecordRow>({ ...INSPECT, values: [scope.apiKeyId, scope.key] });
    const row = rows[0];
    if (!row || row.reclaimable) return { kind: "absent" };
    if (row.rpc !== scope.rpc || !sameBytes(row.request_hash, scope.requestHash)) return { kind: "mismatch" };
    if (row.state === "in_progress") return { kind: "in_progress", leaseSecondsLeft: row.lease_seconds_left };
    return { kind: "completed", answer: answerOf(row) };
  }

  async complete(scope: IdempotencyScope, token: string, answer: StoredAnswer): Promise<boolean> {
    const pool = await this.#pool();
    const headers = Object.keys(answer.headers).length > 0 ? JSON.stringify(answer.headers) : null;
    const values =
      answer.kind === "response"
        ? [scope.apiKeyId, scope.key, token, Buffer.from(answer.response), headers, null, null, this.#windowHours]
        : [scope.apiKeyId, scope.key, token, null, headers, answer.code, answer.message, this.#windowHours];
    const result = await pool.query({ ...COMPLETE, values });
    return (result.rowCount ?? 0) > 0;
  }

  async release(scope: IdempotencyScope, token: string): Promise<void> {
    const pool = await this.#pool();
    await pool.query({ ...RELEASE, values: [scope.apiKeyId, scope.key, token] });
  }

  /** Deletes expired records; returns how many. */
  async cleanup(): Promise<number> {
    const pool = await this.#pool();
    const result = await pool.query(`delete from idempotency_record where expires_at < now()`);
    return result.rowCount ?? 0;
  }

  /** Stops the timer and waits for a cleanup in progress (call before closing the ORM). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#cleanup;
  }

  #cleanupInBackground(): void {
    // One at a time: a tick that finds the previous delete still running skips.
    if (this.#cleaning) return;
    this.#cleaning = true;
    this.#cleanup = this.cleanup()
      .catch((error: unknown) => this.#onCleanupError(error))
      .finally(() => {
        this.#cleaning = false;
      });
  }
}
