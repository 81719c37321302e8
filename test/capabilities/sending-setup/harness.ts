import { createAccounts, type Accounts } from "../../../src/wiring/accounts.ts";
import type { Credits } from "../../../src/capabilities/credits/index.ts";
import type { SendingSetup } from "../../../src/capabilities/sending-setup/index.ts";
import type { Suppressions } from "../../../src/capabilities/suppressions/index.ts";
import { createCredits } from "../../../src/wiring/credits.ts";
import { createSendingSetup, type SendingSetupConfig, type SendingSetupOptions } from "../../../src/wiring/sending-setup.ts";
import { createSuppressions } from "../../../src/wiring/suppressions.ts";
import { migrate, openOrm, type MikroORM } from "../../../src/adapters/postgres/orm.ts";
import { createTestDatabase, type TestDatabase } from "../../support/test-database.ts";
import { TEST_CONFIG } from "../accounts/harness.ts";

/** The cursor key and low-credits mark of the credits and suppressions of these tests. */
export const LIST_CONFIG = { cursorSecret: "test-cursor-secret", lowCreditsThreshold: 100 };

export const SETUP_CONFIG: SendingSetupConfig = {
  dataEncryptionKey: "test-data-encryption-key",
  spfInclude: "spf.mail.test",
  returnPathMxHost: "feedback.mail.test",
  dnsServers: [],
  allowVerificationOverride: true,
};

/**
 * A fresh migrated database with the sending setup, credits and
 * suppressions on it, and the accounts service to make companies with.
 */
export interface SendingHarness {
  readonly db: TestDatabase;
  readonly orm: MikroORM;
  readonly accounts: Accounts;
  readonly setup: SendingSetup;
  readonly credits: Credits;
  readonly suppressions: Suppressions;
  newCompany(name?: string): Promise<string>;
  /** Another setup on the same ORM with other settings (e.g. another DNS server). */
  setupWith(config: Partial<SendingSetupConfig>, options?: SendingSetupOptions): SendingSetup;
  close(): Promise<void>;
}

export async function openSendingHarness(config: Partial<SendingSetupConfig> = {}, poolMax = 8): Promise<SendingHarness> {
  const db = await createTestDatabase();
  const orm = await openOrm(db.url, { poolMax });
  await migrate(orm);
  const accounts = createAccounts(orm, TEST_CONFIG);
  return {
    db,
    orm,
    accounts,
    setup: createSendingSetup(orm, { ...SETUP_CONFIG, ...config }),
    credits: createCredits(orm, { config: LIST_CONFIG }),
    suppressions: createSuppressions(orm, LIST_CONFIG),
    async newCompany(name = "Acme Inc.") {
      return (await accounts.companies.create({ name })).id;
    },
    setupWith(overrides, options) {
      return createSendingSetup(orm, { ...SETUP_CONFIG, ...config, ...overrides }, options);
    },
    async close() {
      await accounts.usage.close();
      await orm.close();
      await db.drop();
    },
  };
}
