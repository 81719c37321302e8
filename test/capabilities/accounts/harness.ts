import { expect } from "vitest";
import { ApiError, type ErrorCodeName } from "../../../src/contract/api-error.ts";
import { API_KEY_SCOPES } from "../../../src/capabilities/accounts/scopes.ts";
import { type AuditContext, OPERATOR_ACTOR } from "../../../src/capabilities/audit/types.ts";
import { createAccounts, type Accounts, type AccountsConfig } from "../../../src/wiring/accounts.ts";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";

export const TEST_CONFIG: AccountsConfig = {
  apiKeyPepper: "test-pepper",
  apiKeyPrefix: "tml",
  keyRotationGraceHours: 24,
  // Long enough that no timer flush happens during a test: tests flush by hand.
  keyUsageFlushMs: 3_600_000,
  cursorSecret: "test-cursor-secret",
};

/** The operator, as the audit log names it. */
export const OPERATOR_AUDIT: AuditContext = { actor: OPERATOR_ACTOR, requestId: "test", clientIp: "" };

/** A change of keys made by the operator, who may grant every scope (as `mailctl key create` does). */
export function asOperator<C extends object>(command: C): C & { readonly audit: AuditContext; readonly grantableScopes: readonly string[] } {
  return { ...command, audit: OPERATOR_AUDIT, grantableScopes: API_KEY_SCOPES };
}

/** A clock the test moves by hand. */
export class FakeClock {
  #now: number;
  constructor(start = Date.parse("2030-01-01T12:00:00.000Z")) {
    this.#now = start;
  }
  now = (): Date => new Date(this.#now);
  advanceHours(hours: number): void {
    this.#now += hours * 3_600_000;
  }
}

/** A fresh migrated database and the accounts domain on it ("one API process"). */
export interface Harness {
  readonly db: TestDatabase;
  readonly orm: MikroORM;
  readonly accounts: Accounts;
  readonly clock: FakeClock;
  /** Another "API process": its own ORM and pool on the same database. */
  openProcess(): Promise<{ orm: MikroORM; accounts: Accounts }>;
  close(): Promise<void>;
}

export async function openHarness(): Promise<Harness> {
  const db = await createTestDatabase();
  const orm = await openOrm(db.url, { poolMax: 4 });
  await migrate(orm);
  const clock = new FakeClock();
  const accounts = createAccounts(orm, TEST_CONFIG, { clock: clock.now });
  const others: { orm: MikroORM; accounts: Accounts }[] = [];
  return {
    db,
    orm,
    accounts,
    clock,
    async openProcess() {
      const otherOrm = await openOrm(db.url, { poolMax: 2 });
      const other = { orm: otherOrm, accounts: createAccounts(otherOrm, TEST_CONFIG, { clock: clock.now }) };
      others.push(other);
      return other;
    },
    async close() {
      for (const o of [...others, { orm, accounts }]) {
        await o.accounts.close();
        await o.orm.close();
      }
      await db.drop();
    },
  };
}

/** Awaits `promise` and checks that it fails with ApiError `code`. */
export async function expectApiError(promise: Promise<unknown>, code: ErrorCodeName): Promise<ApiError> {
  const error: unknown = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ApiError ${code}`).toBeInstanceOf(ApiError);
  expect((error as ApiError).code).toBe(code);
  return error as ApiError;
}
