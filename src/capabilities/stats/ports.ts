/**
 * What a message's statistics count: its acceptance, and each move into
 * one of these statuses (the contract's, `mail.v1.MessageStatus`). `queued`
 * is the acceptance itself and `processing` a step inside the handoff, so
 * neither counts apart.
 */
export const STATS_OUTCOMES = ["accepted", "sent", "delivered", "bounced", "complained", "rejected", "failed", "suppressed", "deferred"] as const;

export type StatsOutcome = (typeof STATS_OUTCOMES)[number];

export type OutcomeCounts = Readonly<Record<StatsOutcome, number>>;

/** Which messages a series counts: all of the company's, those with a tag key, or those of a template. */
export type StatsSegment = { readonly kind: "all" } | { readonly kind: "tag"; readonly tag: string } | { readonly kind: "template"; readonly templateId: string };

export interface StatsSeriesQuery {
  readonly companyId: string;
  readonly segment: StatsSegment;
  /** Bucket starts from `since` (inclusive) to `until` (exclusive), both on bucket boundaries. */
  readonly since: Date;
  readonly until: Date;
  readonly intervalHours: 1 | 24;
}

export interface StoredBucket {
  readonly start: Date;
  readonly counts: OutcomeCounts;
}

export interface StatsLeadersQuery {
  readonly companyId: string;
  readonly since: Date;
  readonly until: Date;
  readonly limit: number;
  readonly minSent: number;
}

export interface StoredLeader {
  readonly kind: "tag" | "template";
  readonly key: string;
  readonly counts: OutcomeCounts;
  /** Its place by accepted messages (1: the most), and by bounce rate (null: too few sent to rank). */
  readonly volumeRank: number;
  readonly bounceRank: number | null;
}

/**
 * The aggregates, kept by the message store as it records acceptances and
 * moves (src/adapters/postgres/messages/message-stats.ts); this port reads
 * them. Every read is one company's.
 */
export interface StatsStore {
  /** Non-empty buckets of the range, oldest first. */
  series(query: StatsSeriesQuery): Promise<StoredBucket[]>;
  /** The first `limit` tags and templates by volume, and by bounce rate. */
  leaders(query: StatsLeadersQuery): Promise<StoredLeader[]>;
}
