import type { JsonObject } from "@bufbuild/protobuf";
import type { Conversions } from "../../../src/capabilities/conversions/index.ts";
import { createConversions } from "../../../src/wiring/conversions.ts";
import { openSendingHarness, type SendingHarness } from "../sending-setup/harness.ts";

/** The conversions' list cursors' key in these tests. */
export const CURSOR_SECRET = "test-conversions-cursor-secret";

/** A fresh migrated database with the conversions capability on it, and helpers to make companies, contacts and read the outbox. */
export interface ConversionsHarness {
  readonly base: SendingHarness;
  readonly conversions: Conversions;
  newCompany(name?: string): Promise<string>;
  /** A contact row as the contacts capability writes it (its matching key lower-cased). */
  newContact(companyId: string, email: string): Promise<string>;
  /** The company's webhook outbox rows, oldest first. */
  outbox(companyId: string): Promise<{ event: string; data: JsonObject; occurredAt: Date; dedupeKey: string }[]>;
  close(): Promise<void>;
}

export async function openConversionsHarness(poolMax = 8): Promise<ConversionsHarness> {
  const base = await openSendingHarness({}, poolMax);
  return {
    base,
    conversions: createConversions(base.orm, { cursorSecret: CURSOR_SECRET }),
    newCompany: (name) => base.newCompany(name),
    async newContact(companyId, email) {
      const { rows } = await base.db.query<{ id: string }>(
        `insert into contact (company_id, email, email_normalized, status) values ($1, $2, lower($2), 'pending') returning id`,
        [companyId, email],
      );
      return rows[0]?.id ?? "";
    },
    async outbox(companyId) {
      const { rows } = await base.db.query<{ event: string; data: JsonObject; occurred_at: Date; dedupe_key: string }>(
        `select event, data, occurred_at, dedupe_key from webhook_event where company_id = $1 order by created_at, id`,
        [companyId],
      );
      return rows.map((r) => ({ event: r.event, data: r.data, occurredAt: r.occurred_at, dedupeKey: r.dedupe_key }));
    },
    close: () => base.close(),
  };
}
