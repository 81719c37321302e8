import type { AttributedClick, ClickLedger, ValidClick } from "../../../capabilities/conversions/index.ts";
import { type Pool, toDate } from "../sql.ts";

type Db = () => Promise<Pool>;

/**
 * The attribution lookup; parameters: company id, contact id (or null),
 * address (or null), from (exclusive), to (inclusive). Each branch reads
 * one partial index newest first and stops at its first row; ties on
 * occurred_at are broken by id so the answer is stable. Exported for the
 * test that checks its plan.
 */
export const LAST_VERIFIED_CLICK_SQL = `select campaign_id, link_id, occurred_at from (
    (select campaign_id, link_id, occurred_at, id from campaign_click
      where company_id = $1 and contact_id = $2 and contact_id is not null and not suspect
        and occurred_at > $4 and occurred_at <= $5
      order by occurred_at desc limit 1)
    union all
    (select campaign_id, link_id, occurred_at, id from campaign_click
      where company_id = $1 and email = $3 and email is not null and not suspect
        and occurred_at > $4 and occurred_at <= $5
      order by occurred_at desc limit 1)
  ) latest
  order by occurred_at desc, id desc
  limit 1`;

/**
 * The ClickLedger port on PostgreSQL: table campaign_click, one row per
 * (company, clickId). The attribution lookup reads the verified clicks of
 * one contact through two partial indexes (by contact id, by address; both
 * newest first, suspect clicks left out), each branch stopping at its first
 * row, so it costs two short index scans however many clicks the company
 * has.
 */
export class PostgresClickLedger implements ClickLedger {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async record(companyId: string, click: ValidClick): Promise<boolean> {
    const { rowCount } = await (await this.#db()).query(
      `insert into campaign_click (company_id, click_id, campaign_id, link_id, recipient_id, contact_id, email, suspect, occurred_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       on conflict (company_id, click_id) do nothing`,
      [
        companyId,
        click.clickId,
        click.campaignId,
        click.linkId,
        click.recipientId,
        click.contactId,
        click.email,
        click.suspect,
        click.occurredAt,
      ],
    );
    return rowCount === 1;
  }

  async lastVerifiedClick(
    companyId: string,
    who: { readonly contactId: string | null; readonly email: string | null },
    from: Date,
    to: Date,
  ): Promise<AttributedClick | undefined> {
    const { rows } = await (await this.#db()).query<{ campaign_id: string; link_id: string; occurred_at: string | Date }>(
      LAST_VERIFIED_CLICK_SQL,
      [companyId, who.contactId, who.email, from, to],
    );
    const row = rows[0];
    return row ? { campaignId: row.campaign_id, linkId: row.link_id, occurredAt: toDate(row.occurred_at) } : undefined;
  }
}
