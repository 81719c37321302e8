import { expect } from "vitest";
import { ApiError, ValidationError, type ErrorCodeName } from "../../../src/contract/api-error.ts";
import { OPERATOR_ACTOR, type AuditContext } from "../../../src/capabilities/audit/types.ts";
import type { ContactLists, Contacts } from "../../../src/capabilities/contacts/index.ts";
import { createContactsCapability } from "../../../src/wiring/contacts.ts";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";

export const CURSOR_SECRET = "test-contacts-cursor-secret";

/** Who acts in the changes the tests make: an operator (each change writes its audit row). */
export const AUDIT: AuditContext = { actor: OPERATOR_ACTOR, requestId: "test", clientIp: "" };

/** A clock the test moves by hand; every read of it moves it on by one millisecond, so writes are ordered. */
export class StepClock {
  #now: number;
  constructor(start = Date.parse("2030-01-01T12:00:00.000Z")) {
    this.#now = start;
  }
  now = (): Date => new Date(this.#now++);
  peek(): Date {
    return new Date(this.#now);
  }
  advanceMs(ms: number): void {
    this.#now += ms;
  }
}

/** One `contact.updated` row of the webhook_event outbox. */
export interface OutboxEvent {
  readonly event: string;
  readonly occurredAt: Date;
  readonly data: Record<string, unknown>;
}

/** A fresh migrated database with the contacts capability on it, built by src/wiring/contacts.ts. */
export interface ContactsHarness {
  readonly db: TestDatabase;
  readonly orm: MikroORM;
  readonly contacts: Contacts;
  readonly lists: ContactLists;
  readonly clock: StepClock;
  newCompany(name?: string): Promise<string>;
  /** The company's outbox rows, oldest first. */
  events(companyId: string): Promise<OutboxEvent[]>;
  close(): Promise<void>;
}

export async function openContactsHarness(poolMax = 8): Promise<ContactsHarness> {
  const db = await createTestDatabase();
  const orm = await openOrm(db.url, { poolMax });
  await migrate(orm);
  const clock = new StepClock();
  const { contacts, lists } = createContactsCapability(orm, { cursorSecret: CURSOR_SECRET }, { clock: clock.now });
  return {
    db,
    orm,
    contacts,
    lists,
    clock,
    async newCompany(name = "Acme Inc.") {
      const { rows } = await db.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
      const id = rows[0]?.id;
      if (!id) throw new Error("no company");
      return id;
    },
    async events(companyId) {
      const { rows } = await db.query<{ event: string; occurred_at: Date; data: Record<string, unknown> }>(
        `select event, occurred_at, data from webhook_event where company_id = $1 order by occurred_at, created_at, id`,
        [companyId],
      );
      return rows.map((row) => ({ event: row.event, occurredAt: row.occurred_at, data: row.data }));
    },
    async close() {
      await orm.close();
      await db.drop();
    },
  };
}

/** The error a promise rejects with; fails the test when it resolves or rejects with something else. */
export async function apiErrorOf(promise: Promise<unknown>, code: ErrorCodeName): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).code).toBe(code);
    return error as ApiError;
  }
  throw new Error(`expected ${code}, but the call succeeded`);
}

/** The fields a VALIDATION_ERROR names, in its order. */
export async function fieldsNamed(promise: Promise<unknown>): Promise<string[]> {
  const error = await apiErrorOf(promise, "VALIDATION_ERROR");
  expect(error).toBeInstanceOf(ValidationError);
  return (error as ValidationError).fields.map((f) => f.field);
}
