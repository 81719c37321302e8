import { LockMode, raw } from "@mikro-orm/core";
import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import {
  amountFromDatabase,
  amountToDatabase,
  type CampaignRevenue,
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
import { ConversionSchema } from "../entities/index.ts";
import { insertOutboxEvents } from "../webhooks/outbox-events.ts";
import { type ConversionRow, conversionFromRow } from "./conversion-rows.ts";

/**
 * The ConversionStore port on PostgreSQL through MikroORM, each call on its
 * own EntityManager fork; rows are read unmapped (`execute(..., false)`)
 * so that amounts stay exact text and positions keep microseconds. A write
 * is one transaction. It locks the stored conversion of (company, eventId)
 * (`for update`), so concurrent later writes of one conversion apply one
 * after the other, each deciding on the previous one's result. Without
 * one, it inserts the first write: the unique constraint
 * conversion_event_index decides which of concurrent first writes wins
 * (`insert ... on conflict do nothing`: a loser's insert waits for the
 * winner to commit, then inserts nothing), and the losers go on as later
 * writes of the winner's conversion.
 * Each change writes its `conversion.recorded` row to the webhook outbox
 * in the same transaction, so the conversion and its events never disagree.
 *
 * Every statement is scoped by company_id.
 */
export class PostgresConversionStore implements ConversionStore {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  write(request: ConversionWrite): Promise<{ conversion: ConversionRecord; outcome: ConversionOutcome }> {
    return this.#orm.em.fork().transactional(async (em) => {
      const stored = await lockByEventId(em, request.companyId, request.eventId);
      if (!stored) {
        const first = request.first();
        const inserted = await insert(em, request.companyId, first.conversion);
        if (inserted) {
          await insertOutboxEvents(em, request.companyId, [request.event(inserted, first.adjustment)]);
          return { conversion: inserted, outcome: "recorded" as const };
        }
      }
      // Stored before, or by a concurrent first write that won the insert (committed by now).
      const current = stored ?? (await lockByEventId(em, request.companyId, request.eventId));
      if (!current) throw new Error("conversion insert conflicted but no conversion holds the event id");
      const decision = request.decide(current);
      if (decision.kind === "duplicate") return { conversion: current, outcome: "duplicate" as const };

      // A conditional update with the company filter (not a flush, whose UPDATE would name the id alone), answering the row.
      const updated = await em
        .createQueryBuilder(ConversionSchema)
        .update({
          status: decision.status,
          refundedAmount: amountToDatabase(decision.refundedAmount),
          metadata: decision.metadata,
          version: raw("version + 1"),
          updatedAt: raw("now()"),
        })
        .where({ company: request.companyId, id: current.id })
        .returning(["*"])
        .execute("run", false);
      const adjusted = (updated.rows as ConversionRow[] | undefined)?.[0];
      if (!adjusted) throw new Error("locked conversion vanished");
      const conversion = conversionFromRow(adjusted);
      await insertOutboxEvents(em, request.companyId, [request.event(conversion, decision.adjustment)]);
      return { conversion, outcome: "adjusted" as const };
    });
  }

  async findByEventId(companyId: string, eventId: string): Promise<ConversionRecord | undefined> {
    const row = await this.#orm.em
      .fork()
      .createQueryBuilder(ConversionSchema)
      .select("*")
      .where({ company: companyId, eventId })
      .execute<ConversionRow | null>("get", false);
    return row ? conversionFromRow(row) : undefined;
  }

  /**
   * Sums per campaign and currency, exact (numeric sums, read as text).
   * Uses conversion_campaign_index (company_id, campaign_id) for the
   * company's attributed conversions.
   */
  async revenueByCampaign(companyId: string, filter: ConversionFilter): Promise<CampaignRevenue[]> {
    const occurred = {
      ...(filter.since !== undefined ? { $gte: filter.since } : {}),
      ...(filter.until !== undefined ? { $lt: filter.until } : {}),
    };
    const rows = await this.#orm.em
      .fork()
      .createQueryBuilder(ConversionSchema)
      .select([
        "campaignId",
        "currency",
        raw("count(*) as conversions"),
        raw("sum(revenue)::text as gross"),
        raw("sum(refunded_amount)::text as refunded"),
      ])
      .where({
        company: companyId,
        campaignId: filter.campaignId ?? { $ne: null },
        ...(Object.keys(occurred).length > 0 ? { occurredAt: occurred } : {}),
      })
      .groupBy(["campaignId", "currency"])
      .orderBy({ campaignId: "asc", currency: "asc" })
      .execute<{ campaign_id: string; currency: string; conversions: string; gross: string; refunded: string }[]>("all", false);
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
    const qb = this.#orm.em
      .fork()
      .createQueryBuilder(ConversionSchema)
      .select(["*", raw(`to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as position_at`)])
      .where({ company: companyId, email: contact.email });
    // A row-value comparison, which the index range needs and the filter syntax has no form for.
    if (after) qb.andWhere(raw("(created_at, id) < (?::timestamptz, ?::uuid)", [after.createdAt, after.id]));
    const found = await qb
      .orderBy({ createdAt: "desc", id: "desc" })
      .limit(rows)
      .execute<(ConversionRow & { position_at: string })[]>("all", false);
    return found.map((row) => ({ item: conversionFromRow(row), position: { createdAt: row.position_at, id: row.id } }));
  }
}

/** The stored conversion of the event id, locked until the transaction ends; undefined when none. */
async function lockByEventId(em: EntityManager, companyId: string, eventId: string): Promise<ConversionRecord | undefined> {
  const row = await em
    .createQueryBuilder(ConversionSchema)
    .select("*")
    .where({ company: companyId, eventId })
    .setLockMode(LockMode.PESSIMISTIC_WRITE)
    .execute<ConversionRow | null>("get", false);
  return row ? conversionFromRow(row) : undefined;
}

/**
 * Inserts a first write unless the event id is taken: of concurrent first
 * writes, one inserts; the others' inserts wait for it to commit and then
 * insert nothing (undefined).
 */
async function insert(em: EntityManager, companyId: string, fresh: NewConversion): Promise<ConversionRecord | undefined> {
  // `on conflict do nothing` rather than em.upsert: a first write never changes a stored conversion.
  const inserted = await em
    .createQueryBuilder(ConversionSchema)
    .insert({
      id: fresh.id,
      company: companyId,
      eventId: fresh.eventId,
      eventType: fresh.eventType,
      contact: fresh.contactId,
      email: fresh.email,
      customerRef: fresh.customerRef,
      revenue: amountToDatabase(fresh.revenue),
      currency: fresh.currency,
      status: fresh.status,
      refundedAmount: amountToDatabase(fresh.refundedAmount),
      occurredAt: fresh.occurredAt,
      metadata: fresh.metadata,
      campaignId: fresh.campaignId,
      linkId: fresh.linkId,
      clickedAt: fresh.clickedAt,
    })
    .onConflict(["company", "eventId"])
    .ignore()
    .returning(["*"])
    .execute("run", false);
  const row = (inserted.rows as ConversionRow[] | undefined)?.[0];
  return row ? conversionFromRow(row) : undefined;
}

