import { newPublicId, SignupForms } from "../../../src/capabilities/forms/index.ts";
import { postgresSignupFormStore } from "../../../src/adapters/postgres/forms/index.ts";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";

export const PUBLIC_BASE_URL = "https://mail.example.test/";

/**
 * A fresh migrated database with the forms capability on it, built from the
 * parts src/wiring/forms.ts uses, with public ids the test chooses.
 */
export interface FormsHarness {
  readonly db: TestDatabase;
  readonly orm: MikroORM;
  readonly forms: SignupForms;
  /** Public ids the next creations draw, in order (then random ones). */
  readonly nextPublicIds: string[];
  newCompany(name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function openFormsHarness(): Promise<FormsHarness> {
  const db = await createTestDatabase();
  const orm = await openOrm(db.url, { poolMax: 4 });
  await migrate(orm);
  const nextPublicIds: string[] = [];
  const forms = new SignupForms({
    store: postgresSignupFormStore(orm),
    publicBaseUrl: PUBLIC_BASE_URL,
    newPublicId: () => nextPublicIds.shift() ?? newPublicId(),
  });
  return {
    db,
    orm,
    forms,
    nextPublicIds,
    async newCompany(name = "Acme Inc.") {
      const { rows } = await db.query<{ id: string }>(`insert into company (name) values ($1) returning id`, [name]);
      const id = rows[0]?.id;
      if (!id) throw new Error("no company");
      return id;
    },
    async close() {
      await orm.close();
      await db.drop();
    },
  };
}
