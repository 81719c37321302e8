import { randomUUID } from "node:crypto";
import { PostgresMessageStore } from "../../../../src/adapters/postgres/messages/message-store.ts";
import { migrate, openOrm, type MikroORM } from "../../../../src/adapters/postgres/orm.ts";
import { poolOf, type Pool } from "../../../../src/adapters/postgres/sql.ts";
import type { EmailProvider } from "../../../../src/capabilities/messages/email-provider.ts";
import { MessageLifecycle } from "../../../../src/capabilities/messages/lifecycle/message-lifecycle.ts";
import type { CreditsPort, PacePort, SigningKeysPort, SuppressionsPort } from "../../../../src/capabilities/messages/lifecycle/ports.ts";
import { createTestDatabase, type TestDatabase } from "../../../support/test-database.ts";

/**
 * The message lifecycle on a real database (its messages, events and
 * webhook events), with the neighbouring capabilities as small in-memory
 * stand-ins whose failures a test can switch on.
 */
export interface LifecycleHarness {
  readonly db: TestDatabase;
  readonly pool: () => Promise<Pool>;
  readonly store: PostgresMessageStore;
  /** A company that may send, with one queued message to `recipient`; answers both ids. */
  queue(recipient: string): Promise<{ companyId: string; messageId: string }>;
  /** A lifecycle on this database (one per simulated worker process); `parts` may replace the signing keys and the pace and shorten the handoff lease. */
  lifecycle(
    provider: EmailProvider,
    parts: { credits: CreditsPort; suppressions: SuppressionsPort; signingKeys?: SigningKeysPort; pace?: PacePort; handoffLeaseMs?: number },
  ): MessageLifecycle;
  close(): Promise<void>;
}

/** A sending pace that always has a slot: these tests are about what happens after it. */
export const OPEN_PACE: PacePort = { reserve: async () => 0 };

/** Credits whose next `failRefunds` refunds throw, as when the credits store is unreachable. */
export class TestCredits implements CreditsPort {
  readonly charged = new Set<string>();
  readonly refunded = new Set<string>();
  failRefunds = 0;

  async chargeForMessage({ messageId }: { readonly messageId: string }): Promise<"charged" | "already_charged"> {
    if (this.charged.has(messageId)) return "already_charged";
    this.charged.add(messageId);
    return "charged";
  }

  async refundMessage({ messageId }: { readonly messageId: string }): Promise<"refunded" | "already_refunded" | "not_charged"> {
    if (this.failRefunds > 0) {
      this.failRefunds--;
      throw new Error("credits store unavailable");
    }
    if (!this.charged.has(messageId)) return "not_charged";
    if (this.refunded.has(messageId)) return "already_refunded";
    this.refunded.add(messageId);
    return "refunded";
  }
}

/** Suppressions whose next `failSuppress` calls of suppress() throw. */
export class TestSuppressions implements SuppressionsPort {
  readonly suppressed = new Map<string, string>();
  failSuppress = 0;

  async isSuppressed({ companyId, email }: { readonly companyId: string; readonly email: string }): Promise<boolean> {
    return this.suppressed.has(`${companyId}/${email}`);
  }

  async suppress({ companyId, email, reason }: { readonly companyId: string; readonly email: string; readonly reason: "bounce" | "complaint" }): Promise<void> {
    if (this.failSuppress > 0) {
      this.failSuppress--;
      throw new Error("suppression list unavailable");
    }
    this.suppressed.set(`${companyId}/${email}`, reason);
  }
}

const SIGNING_KEYS: SigningKeysPort = {
  async resolveSender() {
    return { dkim: { domainName: "shop.example", keySelector: "mail", privateKey: "unused by the simulator" } };
  },
};

export async function startLifecycleHarness(): Promise<LifecycleHarness> {
  const db = await createTestDatabase();
  let orm: MikroORM | undefined;
  try {
    orm = await openOrm(db.url, { poolMax: 6 });
    await migrate(orm);
  } catch (error) {
    await orm?.close();
    await db.drop();
    throw error;
  }
  const opened = orm;
  const pool = poolOf(opened);
  const store = new PostgresMessageStore(pool);
  return {
    db,
    pool,
    store,
    async queue(recipient) {
      const { rows } = await db.query<{ id: string }>(`insert into company (name) values ('shop') returning id`);
      const companyId = rows[0]?.id ?? "";
      const sender = await db.query<{ id: string }>(
        `with domain as (
           insert into sending_domain (company_id, domain, return_path_domain, dkim_selector, dkim_public_key, dkim_private_key_sealed, dkim_verified)
           values ($1, 'shop.example', 'bounces.shop.example', 'mail', 'unused', 'unused', true) returning id)
         insert into sender (company_id, domain_id, email, is_default) select $1, id, 'receipts@shop.example', true from domain returning id`,
        [companyId],
      );
      const { message } = await store.insertQueued({
        id: randomUUID(),
        companyId,
        apiKeyId: null,
        idempotencyKey: null,
        recipient,
        recipientName: null,
        senderId: sender.rows[0]?.id ?? "",
        fromEmail: "receipts@shop.example",
        fromName: null,
        replyTo: null,
        subject: "Your receipt",
        html: "<p>Thanks</p>",
        text: null,
        templateId: null,
        tags: {},
      });
      return { companyId, messageId: message.id };
    },
    lifecycle(provider, parts) {
      return new MessageLifecycle({ store, provider, signingKeys: SIGNING_KEYS, pace: OPEN_PACE, ...parts });
    },
    async close() {
      await opened.close();
      await db.drop();
    },
  };
}
