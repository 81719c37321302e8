import type { EntityManager, MikroORM } from "@mikro-orm/postgresql";
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
import { TrackingFirstSchema, TrackingHitSchema, TrackingLinkSchema, TrackingRecipientSchema } from "../entities/index.ts";
import { isUuid } from "../ids.ts";
import { poolOf, toDate, type Pool } from "../sql.ts";

/** A row of clicksPerLink's statement; counts are bigint, read as text. */
interface LinkCountsRow {
  link_id: string;
  url: string;
  clicks: string | number;
  suspect_clicks: string | number;
  unique_clicks: string | number;
}

/**
 * The TrackingStore port on PostgreSQL through MikroORM, each call on its
 * own EntityManager fork. Tables tracking_recipient, tracking_link,
 * tracking_hit, tracking_first (entities/tracking.ts). registerCopy stays
 * one plain SQL statement on the pool: a campaign's send loop registers
 * every tracked copy, and `npm run bench:campaign` measures that loop. The
 * campaign's counts (countsFor, clicksPerLink, timeline) are SQL aggregates
 * written out as one statement each. Every statement but the recipient lookup
 * filters on the company; that one reads by the recipient id of a token,
 * whose MAC is then checked against the row's company, campaign and
 * contact. A company id that cannot be a row id finds nothing.
 */
export class PostgresTrackingStore implements TrackingStore {
  readonly #orm: MikroORM;

  readonly #pool: () => Promise<Pool>;

  constructor(orm: MikroORM) {
    this.#orm = orm;
    this.#pool = poolOf(orm);
  }

  #fork(): EntityManager {
    return this.#orm.em.fork();
  }

  async registerCopy(recipient: TrackedRecipient, links: readonly CampaignLink[]): Promise<void> {
    // In link id order: concurrent copies of one campaign then meet its link rows in the same order, and none
    // waits for a row another holds while holding one that other waits for.
    const ordered = [...links].sort((a, b) => (a.linkId < b.linkId ? -1 : a.linkId > b.linkId ? 1 : 0));
    // One statement, so both land or neither: the copy and its campaign's links (a copy decorated again, and a link
    // met again, keep their first rows).
    await (await this.#pool()).query(
      `with copy as (
         insert into tracking_recipient (recipient_id, company_id, campaign_id, contact_id, email, language)
         values ($1, $2, $3, $4, $5, $6)
         on conflict (recipient_id) do nothing
       )
       insert into tracking_link (company_id, campaign_id, link_id, url)
       select $2, $3, l.link_id, l.url from unnest($7::text[], $8::text[]) with ordinality as l(link_id, url, n)
       order by l.n
       on conflict (company_id, campaign_id, link_id) do nothing`,
      [
        recipient.recipientId,
        recipient.companyId,
        recipient.campaignId,
        recipient.contactId,
        recipient.email,
        recipient.language,
        ordered.map((l) => l.linkId),
        ordered.map((l) => l.url),
      ],
    );
  }

  async findRecipient(recipientId: string): Promise<TrackedRecipient | undefined> {
    if (!isUuid(recipientId)) return undefined;
    const found = await this.#fork().findOne(TrackingRecipientSchema, { recipientId });
    return found
      ? {
          companyId: found.company.id,
          campaignId: found.campaignId,
          recipientId: found.recipientId,
          contactId: found.contactId,
          email: found.email,
          language: found.language ?? null,
        }
      : undefined;
  }

  async linkUrl(companyId: string, campaignId: string, linkId: string): Promise<string | undefined> {
    if (!isUuid(companyId)) return undefined;
    const found = await this.#fork().findOne(TrackingLinkSchema, { company: companyId, campaignId, linkId }, { fields: ["url"] });
    return found?.url;
  }

  async recentClicks(companyId: string, recipientId: string, since: Date): Promise<{ readonly linkId: string; readonly at: Date }[]> {
    if (!isUuid(companyId) || !isUuid(recipientId)) return [];
    const hits = await this.#fork().find(
      TrackingHitSchema,
      { company: companyId, recipientId, occurredAt: { $gte: since }, kind: "click" },
      { fields: ["linkId", "occurredAt"], orderBy: { occurredAt: "desc" }, limit: 50 },
    );
    // A click always names its link (only opens have none).
    return hits.map((hit) => ({ linkId: hit.linkId ?? "", at: hit.occurredAt }));
  }

  async recordHit(hit: TrackingHit): Promise<void> {
    await this.#fork().insert(TrackingHitSchema, {
      id: hit.id,
      company: hit.companyId,
      campaignId: hit.campaignId,
      recipientId: hit.recipientId,
      kind: hit.kind,
      linkId: hit.linkId,
      suspect: hit.suspect,
      reasons: hit.reasons.join(","),
      occurredAt: hit.at,
    });
  }

  async recordFirst(first: FirstEngagement): Promise<boolean> {
    // `on conflict do nothing` on the primary key: of concurrent firsts of one (recipient, kind, link) exactly one
    // inserts (the others wait for it to commit, then insert nothing), and only it answers true.
    const inserted = await this.#fork()
      .createQueryBuilder(TrackingFirstSchema)
      .insert({
        company: first.companyId,
        recipientId: first.recipientId,
        kind: first.kind,
        linkId: first.linkId ?? "",
        campaignId: first.campaignId,
        occurredAt: first.at,
      })
      .onConflict(["company", "recipientId", "kind", "linkId"])
      .ignore()
      .execute("run");
    return inserted.affectedRows === 1;
  }

  async countsFor(companyId: string, campaignId: string): Promise<CampaignEngagement> {
    if (!isUuid(companyId)) return { uniqueOpens: 0, opens: 0, machineOpens: 0, clicks: 0, suspectClicks: 0, uniqueClicks: 0, unsubscribes: 0 };
    // Written out: seven filtered counts over two tables in one statement (one scan of the campaign's rows of
    // each), which the query builder could only spell as raw fragments around two queries.
    // The honeypot is no campaign link: its hits are not clicks.
    const rows = await this.#fork().execute<Record<keyof CampaignEngagement, string | number>[]>(
      `select f.unique_opens as "uniqueOpens", f.unique_clicks as "uniqueClicks", f.unsubscribes as "unsubscribes",
              h.opens as "opens", h.machine_opens as "machineOpens", h.clicks as "clicks", h.suspect_clicks as "suspectClicks"
         from (select count(*) filter (where kind = 'open') as unique_opens,
                      count(distinct recipient_id) filter (where kind = 'click') as unique_clicks,
                      count(*) filter (where kind = 'unsubscribe') as unsubscribes
                 from tracking_first where company_id = ? and campaign_id = ?) f,
              (select count(*) filter (where kind = 'open') as opens,
                      count(*) filter (where kind = 'open' and suspect) as machine_opens,
                      count(*) filter (where kind = 'click' and link_id <> ?) as clicks,
                      count(*) filter (where kind = 'click' and link_id <> ? and suspect) as suspect_clicks
                 from tracking_hit where company_id = ? and campaign_id = ?) h`,
      [companyId, campaignId, HONEYPOT_LINK_ID, HONEYPOT_LINK_ID, companyId, campaignId],
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
    if (!isUuid(companyId)) return [];
    // Written out: each link with three counts of other tables (correlated subqueries), ordered by one of them;
    // the query builder could only spell them as raw fragments.
    const rows = await this.#fork().execute<LinkCountsRow[]>(
      `select l.link_id, l.url,
              (select count(*) from tracking_hit h where h.company_id = l.company_id and h.campaign_id = l.campaign_id and h.kind = 'click' and h.link_id = l.link_id) as clicks,
              (select count(*) from tracking_hit h where h.company_id = l.company_id and h.campaign_id = l.campaign_id and h.kind = 'click' and h.link_id = l.link_id and h.suspect) as suspect_clicks,
              (select count(*) from tracking_first f where f.company_id = l.company_id and f.campaign_id = l.campaign_id and f.kind = 'click' and f.link_id = l.link_id) as unique_clicks
         from tracking_link l
        where l.company_id = ? and l.campaign_id = ?
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
    if (!isUuid(companyId)) return [];
    // Written out: grouping by a computed bucket (date_trunc in UTC) with filtered counts has no query-builder form
    // but raw fragments.
    const rows = await this.#fork().execute<{ start: string | Date; opens: number; clicks: number }[]>(
      `select date_trunc(?, occurred_at at time zone 'UTC') at time zone 'UTC' as start,
              count(*) filter (where kind = 'open')::int as opens,
              count(*) filter (where kind = 'click' and link_id <> ?)::int as clicks
         from tracking_hit
        where company_id = ? and campaign_id = ? and not suspect
        group by 1
        order by 1`,
      [interval, HONEYPOT_LINK_ID, companyId, campaignId],
    );
    return rows.map((row) => ({ start: toDate(row.start), opens: row.opens, clicks: row.clicks }));
  }
}
