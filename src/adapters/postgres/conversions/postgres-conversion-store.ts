import {
  amountFromDatabase,
  amountToDatabase,
  type CampaignRevenue,
  type ConversionEventDraft,
  type ConversionFilter,
  type ConversionOutcome,
  type ConversionRecord,
  type ConversionStore,
  type ConversionWrite,
  type KnownContact,
  type NewConversion,
} from "../../../capabilities/conversions/index.ts";
import type { KeysetPosition } from "../../../capabilities/shared/keyset-cursor.ts";
import type { Positioned } from "../../../capabilities/shared/paging.ts";
import type { Pool, PoolClient } from "../sql.ts";
import { inTransaction } from "../transaction.ts";
import { type ConversionRow, conversionFromRow } from "./conversion-rows.ts";

type Db = () => Promise<Pool>;

/**
 * The ConversionStore port on PostgreSQL. A write is one transaction. It
 * locks the stored conversion of (company, eventId) (`for update`), so
 * concurrent later writes of one conversion apply one after the other, each
 * deciding on the previous one's result. Without one, it inserts the first
 * write: the unique constraint conversion_event_index decides which of
 * concurrent first writes wins (`insert ... on conflict do nothing`: a
 * loser's insert waits for the winner to commit, then inserts nothing), and
 * the losers go on as later writes of the winner's conversion.
 * Each change writes its `conversion.recorded` row to the webhook outbox
 * in the same transaction, so the conversion and its events never disagree.
 *
 * Every statement is scoped by company_id.
 */
export class PostgresConversionStore implements ConversionStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  write(request: ConversionWrite): Promise<{ conversion: ConversionRecord; outcome: ConversionOutcome }> {
    return inTransaction(this.#db, async (tx) => {
      const stored = await lockByEventId(tx, request.companyId, request.eventId);
      if (!stored) {
        const first = request.first();
        const inserted = await insert(tx, request.companyId, first.conversion);
        if (inserted) {
          await recordEvent(tx, request.companyId, request.event(inserted, first.adjustment));
          return { conversion: inserted, outcome: "recorded" as const };
        }
      }
      // Stored before, or by a concurrent first write that won the insert (committed by now).
      const current = stored ?? (await lockByEventId(tx, request.companyId, request.eventId));
      if (!current) throw new Error("conversion insert conflicted but no conversion holds the event id");
      const decision = request.decide(current);
      if (decision.kind === "duplicate") return { conversion: current, outcome: "duplicate" as const };

      const updated = await tx.query<ConversionRow>(
        `update conversion
            set status = $3, refunded_amount = $4, metadata = $5, version = version + 1, updated_at = now()
          where company_id = $1 and id = $2
          returning *`,
        [request.companyId, current.id, decision.status, amountToDatabase(decision.refundedAmount), JSON.stringify(decision.metadata)],
      );
      const adjusted = updated.rows[0];
      if (!adjusted) throw new Error("locked conversion vanished");
      const conversion = conversionFromRow(adjusted);
      await recordEvent(tx, request.companyId, request.event(conversion, decision.adjustment));
      return { conversion, outcome: "adjusted" as const };
    });
  }

  async findByEventId(companyId: string, eventId: string): Promise<ConversionRecord | undefined> {
    const { rows } = await (await this.#db()).query<ConversionRow>(`select * from conversion where company_id = $1 and event_id = $2`, [
      companyId,
      eventId,
    ]);
    return rows[0] ? conversionFromRow(rows[0]) : undefined;
  }

  /**
   * Sums per campaign and currency, exact (numeric sums, read as text).
   * Uses conversion_campaign_index (company_id, campaign_id) for the
   * company's attributed conversions.
   */
  async revenueByCampaign(companyId: string, filter: ConversionFilter): Promise<CampaignRevenue[]> {
    const { rows } = await (await this.#db()).query<{
      campaign_id: string;
      currency: string;
      conversions: string;
      gross: string;
      refunded: string;
    }>(
      `select campaign_id, currency, count(*) as conversions,
              sum(revenue)::text as gross, sum(refunded_amount)::text as refunded
         from conversion
        where company_id = $1 and campaign_id is not null
          and ($2::timestamptz is null or occurred_at >= $2)
          and ($3::timestamptz is null or occurred_at < $3)
          and ($4::text is null or campaign_id = $4)
        group by campaign_id, currency
        order by campaign_id, currency`,
      [companyId, filter.since ?? null, filter.until ?? null, filter.campaignId ?? null],
    );
    return rows.map((row) => {
      const gross = amountFromDatabase(row.gross);
      const refunded = amountFromDatabase(row.refunded);
      return { campaignId: row.campaign_id, currency: row.currency, conversions: Number(row.conversions), gross, refunded, net: gross - refunded };
    });
  }

  /**
   * By the contact's address: a conversion of a known contact carries it
   * (whether the write named the contact by id or by address), so one
   * ordered range of conversion_email_index (company_id, email, created_at
   * desc, id desc) answers the page; keyset on (created_at, id) like every
   * list.
   */
  async pageForContact(companyId: string, contact: KnownContact, after: KeysetPosition | null, rows: number): Promise<Positioned<ConversionRecord>[]> {
    const found = await (await this.#db()).query<ConversionRow & { position_at: string }>(
      `select c.*, to_char(c.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at
         from conversion c
        where c.company_id = $1 and c.email = $2
          and ($3::timestamptz is null or (c.created_at, c.id) < ($3::timestamptz, $4::uuid))
        order by c.created_at desc, c.id desc
        limit $5`,
      [companyId, contact.email, after?.createdAt ?? null, after?.id ?? null, rows],
    );
    return found.rows.map((row) => ({ item: conversionFromRow(row), position: { createdAt: row.position_at, id: row.id } }));
  }
}

/** The stored conversion of the event id, locked until the transaction ends; undefined when none. */
async function lockByEventId(tx: PoolClient, companyId: string, eventId: string): Promise<ConversionRecord | undefined> {
  const { rows } = await tx.query<ConversionRow>(`select * from conversion where company_id = $1 and event_id = $2 for update`, [
    companyId,
    eventId,
  ]);
  return rows[0] ? conversionFromRow(rows[0]) : undefined;
}

/**
 * Inserts a first write unless the event id is taken: of concurrent first
 * writes, one inserts; the others' inserts wait for it to commit and then
 * insert nothing (undefined).
 */
async function insert(tx: PoolClient, companyId: string, fresh: NewConversion): Promise<ConversionRecord | undefined> {
  const { rows } = await tx.query<ConversionRow>(
    `insert into conversion (id, company_id, event_id, event_type, contact_id, email, customer_ref, revenue, currency,
       status, refunded_amount, occurred_at, metadata, campaign_id, link_id, clicked_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
     on conflict (company_id, event_id) do nothing
     returning *`,
    [
      fresh.id,
      companyId,
      fresh.eventId,
      fresh.eventType,
      fresh.contactId,
      fresh.email,
      fresh.customerRef,
      amountToDatabase(fresh.revenue),
      fresh.currency,
      fresh.status,
      amountToDatabase(fresh.refundedAmount),
      fresh.occurredAt,
      JSON.stringify(fresh.metadata),
      fresh.campaignId,
      fresh.linkId,
      fresh.clickedAt,
    ],
  );
  return rows[0] ? conversionFromRow(rows[0]) : undefined;
}

/** The change's outbox row; dedupe_key makes a repeated change record nothing twice. */
async function recordEvent(tx: PoolClient, companyId: string, event: ConversionEventDraft): Promise<void> {
  await tx.query(
    `insert into webhook_event (company_id, event, occurred_at, data, dedupe_key)
     values ($1, $2, $3, $4, $5)
     on conflict (dedupe_key) do nothing`,
    [companyId, event.event, event.occurredAt, JSON.stringify(event.data), event.dedupeKey],
  );
}
