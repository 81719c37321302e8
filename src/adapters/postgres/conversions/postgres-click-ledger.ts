import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
import type { AttributedClick, ClickLedger, ValidClick } from "../../../capabilities/conversions/index.ts";
import { CampaignClickSchema } from "../entities/index.ts";
import { toDate } from "../sql.ts";

interface Who {
  readonly contactId: string | null;
  readonly email: string | null;
}

/**
 * The attribution lookup, one statement: a branch per known identifier (by
 * contact id, by address; a null one names no click and has no branch).
 * Each branch reads one partial index newest first and stops at its first
 * row; ties on occurred_at are broken by id so the answer is stable.
 * Undefined when neither identifier is known. Exported for the test that
 * checks its plan.
 */
export function lastVerifiedClickQuery(em: EntityManager, companyId: string, who: Who, from: Date, to: Date) {
  const branch = (by: { contactId: string } | { email: string }) =>
    em
      .createQueryBuilder(CampaignClickSchema)
      .select(["campaignId", "linkId", "occurredAt", "id"])
      .where({ company: companyId, ...by, suspect: false, occurredAt: { $gt: from, $lte: to } })
      .orderBy({ occurredAt: "desc" })
      .limit(1);
  const branches = [
    ...(who.contactId !== null ? [branch({ contactId: who.contactId })] : []),
    ...(who.email !== null ? [branch({ email: who.email })] : []),
  ];
  const [first, ...others] = branches;
  if (!first) return undefined;
  return em
    .createQueryBuilder(CampaignClickSchema)
    .from(others.length > 0 ? first.unionAll(...others) : first, "latest")
    .select(["campaignId", "linkId", "occurredAt"])
    .orderBy({ occurredAt: "desc", id: "desc" })
    .limit(1);
}

/**
 * The ClickLedger port on PostgreSQL through MikroORM, each call on its own
 * EntityManager fork: table campaign_click, one row per (company, clickId).
 * The attribution lookup reads the verified clicks of one contact through
 * two partial indexes (by contact id, by address; both newest first,
 * suspect clicks left out), each branch stopping at its first row, so it
 * costs two short index scans however many clicks the company has.
 */
export class PostgresClickLedger implements ClickLedger {
  readonly #orm: MikroORM;

  constructor(orm: MikroORM) {
    this.#orm = orm;
  }

  async record(companyId: string, click: ValidClick): Promise<boolean> {
    // `on conflict do nothing` rather than em.upsert: whether this call recorded the click is the answer.
    const inserted = await this.#orm.em
      .fork()
      .createQueryBuilder(CampaignClickSchema)
      .insert({
        company: companyId,
        clickId: click.clickId,
        campaignId: click.campaignId,
        linkId: click.linkId,
        recipientId: click.recipientId,
        contactId: click.contactId,
        email: click.email,
        suspect: click.suspect,
        occurredAt: click.occurredAt,
      })
      .onConflict(["company", "clickId"])
      .ignore()
      .execute("run");
    return inserted.affectedRows === 1;
  }

  async lastVerifiedClick(companyId: string, who: Who, from: Date, to: Date): Promise<AttributedClick | undefined> {
    const query = lastVerifiedClickQuery(this.#orm.em.fork(), companyId, who, from, to);
    if (!query) return undefined;
    const row = await query.execute("get");
    return row ? { campaignId: row.campaignId, linkId: row.linkId, occurredAt: toDate(row.occurredAt) } : undefined;
  }
}
