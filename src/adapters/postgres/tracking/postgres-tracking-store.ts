import type {
  CampaignEngagement,
  CampaignLink,
  FirstEngagement,
  LinkEngagement,
  TrackedRecipient,
  TrackingHit,
  TrackingStore,
} from "../../../capabilities/tracking/index.ts";
import { HONEYPOT_LINK_ID } from "../../../capabilities/tracking/index.ts";
import { isUuid } from "../ids.ts";
import { type Pool, toDate } from "../sql.ts";

type Db = () => Promise<Pool>;

/**
 * The TrackingStore port on PostgreSQL, in plain SQL: the click path is a
 * hot path (a redirect waits for it). Tables tracking_recipient,
 * tracking_link, tracking_hit, tracking_first (entities/tracking.ts).
 * Every statement but the recipient lookup filters on the company; that
 * one reads by the recipient id of a token, whose MAC is then checked
 * against the row's company, campaign and contact.
 */
export class PostgresTrackingStore implements TrackingStore {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async registerCopy(recipient: TrackedRecipient, links: readonly CampaignLink[]): Promise<void> {
    const pool = await this.#db();
    // One statement: the copy and the campaign's links (a link met again keeps its first row).
    await pool.query(
      `with copy as (
         insert into tracking_recipient (recipient_id, company_id, campaign_id, contact_id, email, language)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (recipient_id) do nothing
       )
       insert into tracking_link (company_id, campaign_id, link_id, url)
       select $2, $3, l.link_id, l.url from unnest($7::text[], $8::text[]) as l(link_id, url)
       on conflict (company_id, campaign_id, link_id) do nothing`,
      [
        recipient.recipientId,
        recipient.companyId,
        recipient.campaignId,
        recipient.contactId,
        recipient.email,
        recipient.language,
        links.map((l) => l.linkId),
        links.map((l) => l.url),
      ],
    );
  }

  async findRecipient(recipientId: string): Promise<TrackedRecipient | undefined> {
    if (!isUuid(recipientId)) return undefined;
    const { rows } = await (await this.#db()).query<{
      company_id: string;
      campaign_id: string;
      recipient_id: string;
      contact_id: string;
      email: string;
      language: string | null;
    }>(`select company_id, campaign_id, recipient_id, contact_id, email, language from tracking_recipient where recipient_id = $1`, [recipientId]);
    const row = rows[0];
    return row
      ? { companyId: row.company_id, campaignId: row.campaign_id, recipientId: row.recipient_id, contactId: row.contact_id, email: row.email, language: row.language }
      : undefined;
  }

  async linkUrl(companyId: string, campaignId: string, linkId: string): Promise<string | undefined> {
    const { rows } = await (await this.#db()).query<{ url: string }>(
      `select url from tracking_link where company_id = $1 and campaign_id = $2 and link_id = $3`,
      [companyId, campaignId, linkId],
    );
    return rows[0]?.url;
  }

  async recentClicks(companyId: string, recipientId: string, since: Date): Promise<{ readonly linkId: string; readonly at: Date }[]> {
    const { rows } = await (await this.#db()).query<{ link_id: string; occurred_at: string | Date }>(
      `select link_id, occurred_at from tracking_hit
        where company_id = $1 and recipient_id = $2 and occurred_at >= $3 and kind = 'click'
        order by occurred_at desc limit 50`,
      [companyId, recipientId, since],
    );
    return rows.map((r) => ({ linkId: r.link_id, at: toDate(r.occurred_at) }));
  }

  async recordHit(hit: TrackingHit): Promise<void> {
    await (await this.#db()).query(
      `insert into tracking_hit (id, company_id, campaign_id, recipient_id, kind, link_id, suspect, reasons, occurred_at)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [hit.id, hit.companyId, hit.campaignId, hit.recipientId, hit.kind, hit.linkId, hit.suspect, hit.reasons.join(","), hit.at],
    );
  }

  async recordFirst(first: FirstEngagement): Promise<boolean> {
    const { rowCount } = await (await this.#db()).query(
      `insert into tracking_first (company_id, recipient_id, kind, link_id, campaign_id, occurred_at)
       values ($1, $2, $3, $4, $5, $6)
       on conflict (company_id, recipient_id, kind, link_id) do nothing`,
      [first.companyId, first.recipientId, first.kind, first.linkId ?? "", first.campaignId, first.at],
    );
    return rowCount === 1;
  }

  async countsFor(companyId: string, campaignId: string): Promise<CampaignEngagement> {
    const { rows } = await (await this.#db()).query<Record<keyof CampaignEngagement, string>>(
      `select
         (select count(*) from tracking_first where company_id = $1 and campaign_id = $2 and kind = 'open') as "uniqueOpens",
         (select count(distinct recipient_id) from tracking_first where company_id = $1 and campaign_id = $2 and kind = 'click') as "uniqueClicks",
         (select count(*) from tracking_first where company_id = $1 and campaign_id = $2 and kind = 'unsubscribe') as "unsubscribes",
         h.opens as "opens", h.machine_opens as "machineOpens", h.clicks as "clicks", h.suspect_clicks as "suspectClicks"
       from (select count(*) filter (where kind = 'open') as opens,
                    count(*) filter (where kind = 'open' and suspect) as machine_opens,
                    count(*) filter (where kind = 'click' and link_id <> $3) as clicks,
                    count(*) filter (where kind = 'click' and link_id <> $3 and suspect) as suspect_clicks
               from tracking_hit where company_id = $1 and campaign_id = $2) h`,
      // The honeypot is no campaign link: its hits are not clicks.
      [companyId, campaignId, HONEYPOT_LINK_ID],
    );
    const row = rows[0];
    const n = (key: keyof CampaignEngagement): number => Number(row?.[key] ?? 0);
    return {
      uniqueOpens: n("uniqueOpens"),
      opens: n("opens"),
      machineOpens: n("machineOpens"),
      clicks: n("clicks"),
      suspectClicks: n("suspectClicks"),
      uniqueClicks: n("uniqueClicks"),
      unsubscribes: n("unsubscribes"),
    };
  }

  async clicksPerLink(companyId: string, campaignId: string): Promise<LinkEngagement[]> {
    const { rows } = await (await this.#db()).query<{ link_id: string; url: string; clicks: string; suspect_clicks: string; unique_clicks: string }>(
      `select l.link_id, l.url,
              (select count(*) from tracking_hit h where h.company_id = l.company_id and h.campaign_id = l.campaign_id and h.kind = 'click' and h.link_id = l.link_id) as clicks,
              (select count(*) from tracking_hit h where h.company_id = l.company_id and h.campaign_id = l.campaign_id and h.kind = 'click' and h.link_id = l.link_id and h.suspect) as suspect_clicks,
              (select count(*) from tracking_first f where f.company_id = l.company_id and f.campaign_id = l.campaign_id and f.kind = 'click' and f.link_id = l.link_id) as unique_clicks
         from tracking_link l
        where l.company_id = $1 and l.campaign_id = $2
        order by clicks desc, l.link_id`,
      [companyId, campaignId],
    );
    return rows.map((r) => ({
      linkId: r.link_id,
      url: r.url,
      clicks: Number(r.clicks),
      suspectClicks: Number(r.suspect_clicks),
      uniqueClicks: Number(r.unique_clicks),
    }));
  }

  /**
   * Opens not told apart as a machine's and verified clicks of a campaign
   * per bucket (`date_trunc` in UTC), oldest first; only the buckets with
   * any. The honeypot is no campaign link, so its hits are not clicks.
   */
  async timeline(companyId: string, campaignId: string, interval: "hour" | "day"): Promise<{ start: Date; opens: number; clicks: number }[]> {
    const { rows } = await (await this.#db()).query<{ start: string | Date; opens: number; clicks: number }>(
      `select date_trunc($3, occurred_at at time zone 'UTC') at time zone 'UTC' as start,
              count(*) filter (where kind = 'open')::int as opens,
              count(*) filter (where kind = 'click' and link_id <> $4)::int as clicks
         from tracking_hit
        where company_id = $1 and campaign_id = $2 and not suspect
        group by 1
        order by 1`,
      [companyId, campaignId, interval, HONEYPOT_LINK_ID],
    );
    return rows.map((row) => ({ start: new Date(row.start), opens: row.opens, clicks: row.clicks }));
  }
}
