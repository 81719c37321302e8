import type { Pool, PoolClient } from "../sql.ts";
import { toDate } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import type { OrderEventDraft, StoreIntegrationStore } from "../../../capabilities/integrations/ports.ts";
import type { StoreIntegrationRecord, StoreOrder, StoreProvider } from "../../../capabilities/integrations/types.ts";

type Db = () => Promise<Pool>;

interface IntegrationRow {
  id: string;
  company_id: string;
  provider: StoreProvider;
  site_url: string;
  created_at: string | Date;
}

function integrationRecord(row: IntegrationRow): StoreIntegrationRecord {
  return { id: row.id, companyId: row.company_id, provider: row.provider, siteUrl: row.site_url, createdAt: toDate(row.created_at) };
}

const INTEGRATION_COLUMNS = "id, company_id, provider, site_url, created_at";

async function insertEvents(client: PoolClient, companyId: string, events: readonly OrderEventDraft[]): Promise<void> {
  for (const event of events) {
    await client.query(
      `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
       values ($1, $2, $3, $4::jsonb, $5)
       on conflict (dedupe_key) do nothing`,
      [companyId, event.event, event.occurredAt, JSON.stringify(event.data), event.dedupeKey],
    );
  }
}

/**
 * The StoreIntegrationStore port on PostgreSQL: plain SQL on the pg pool.
 *
 * Recording an order: `insert ... on conflict (integration_id,
 * store_order_id) do nothing`; PostgreSQL lets one concurrent push insert,
 * the others wait for it to commit, then lock its row (`for update`) and
 * apply their push to the stored order in turn. The order and its outbox
 * rows commit together.
 */
export function postgresStoreIntegrationStore(db: Db): StoreIntegrationStore {
  return {
    async connect(companyId, provider, siteUrl) {
      const pool = await db();
      const inserted = await pool.query<IntegrationRow>(
        `insert into store_integration (company_id, provider, site_url) values ($1, $2, $3)
         on conflict (company_id, provider, site_url) do nothing
         returning ${INTEGRATION_COLUMNS}`,
        [companyId, provider, siteUrl],
      );
      const created = inserted.rows[0];
      if (created) return { integration: integrationRecord(created), created: true };
      const { rows } = await pool.query<IntegrationRow>(
        `select ${INTEGRATION_COLUMNS} from store_integration where company_id = $1 and provider = $2 and site_url = $3`,
        [companyId, provider, siteUrl],
      );
      const row = rows[0];
      if (!row) throw new Error("store integration vanished after a conflicting insert");
      return { integration: integrationRecord(row), created: false };
    },

    async find(companyId, id) {
      const pool = await db();
      const { rows } = await pool.query<IntegrationRow>(`select ${INTEGRATION_COLUMNS} from store_integration where company_id = $1 and id = $2`, [
        companyId,
        id,
      ]);
      const row = rows[0];
      return row ? integrationRecord(row) : undefined;
    },

    async recordOrder({ companyId, integrationId, order, contactId, decide, events }) {
      return inTransaction(db, async (tx) => {
        const first = decide(undefined);
        const inserted = await tx.query<{ id: string }>(
          `insert into store_order (company_id, integration_id, store_order_id, status, paid, payload, contact_id)
           values ($1, $2, $3, $4, $5, $6::jsonb, $7)
           on conflict (integration_id, store_order_id) do nothing
           returning id`,
          [companyId, integrationId, order.id, order.status, first.paid, JSON.stringify(order), contactId],
        );
        const newId = inserted.rows[0]?.id;
        if (newId) {
          await insertEvents(tx, companyId, events(first, newId, 1));
          return first;
        }
        const { rows } = await tx.query<{ id: string; payload: StoreOrder; version: number }>(
          `select id, payload, version from store_order
            where company_id = $1 and integration_id = $2 and store_order_id = $3
            for update`,
          [companyId, integrationId, order.id],
        );
        const stored = rows[0];
        if (!stored) throw new Error("store order vanished after a conflicting insert");
        const decision = decide(stored.payload);
        if (!decision.changed) return decision;
        const version = stored.version + 1;
        await tx.query(
          `update store_order
              set status = $3, paid = $4, payload = $5::jsonb, contact_id = coalesce($6, contact_id), version = $7, updated_at = now()
            where company_id = $1 and id = $2`,
          [companyId, stored.id, order.status, decision.paid, JSON.stringify(order), contactId, version],
        );
        await insertEvents(tx, companyId, events(decision, stored.id, version));
        return decision;
      });
    },
  };
}
