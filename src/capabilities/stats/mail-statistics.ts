import { type FieldProblem, ValidationError } from "../../contract/api-error.ts";
import { isUuid } from "../shared/uuid.ts";
import { type OutcomeCounts, STATS_OUTCOMES, type StatsSegment, type StatsStore, type StoredLeader } from "./ports.ts";

export interface MailStatisticsDependencies {
  readonly store: StatsStore;
  readonly clock?: () => Date;
}

export type StatsInterval = "hour" | "day";

/** Longest range by hour (744 buckets) and by day. */
export const MAX_HOUR_RANGE_DAYS = 31;
export const MAX_DAY_RANGE_DAYS = 400;
/** The leaders' range: hourly aggregates, summed. */
const MAX_LEADERS_RANGE_DAYS = MAX_DAY_RANGE_DAYS;

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface StatsSeriesCommand {
  readonly companyId: string;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  readonly interval?: StatsInterval | undefined;
  /** Only messages carrying this tag key. */
  readonly tag?: string | undefined;
  /** Only messages sent with this template. */
  readonly templateId?: string | undefined;
}

/** Counts with the rates taken from them (docs/statistics.md). */
export interface StatsCounts extends OutcomeCounts {
  /** bounced / sent; null when nothing was sent. */
  readonly bounceRate: number | null;
  /** complained / sent; null when nothing was sent. */
  readonly complaintRate: number | null;
}

export interface StatsSeries {
  /** Every bucket of the range, oldest first, empty ones included. */
  readonly buckets: readonly { readonly start: Date; readonly counts: StatsCounts }[];
  readonly totals: StatsCounts;
  readonly since: Date;
  readonly until: Date;
  readonly interval: StatsInterval;
}

export interface StatsLeadersCommand {
  readonly companyId: string;
  readonly since?: Date | undefined;
  readonly until?: Date | undefined;
  /** How many of each list (default 5). */
  readonly limit?: number | undefined;
  /** Fewest messages handed over to enter a bounce-rate list (default 1). */
  readonly minSent?: number | undefined;
}

export interface StatsLeader {
  readonly key: string;
  readonly counts: StatsCounts;
}

export interface StatsLeaders {
  readonly tagsByVolume: readonly StatsLeader[];
  readonly tagsByBounceRate: readonly StatsLeader[];
  readonly templatesByVolume: readonly StatsLeader[];
  readonly templatesByBounceRate: readonly StatsLeader[];
  readonly since: Date;
  readonly until: Date;
}

const ZERO: OutcomeCounts = Object.fromEntries(STATS_OUTCOMES.map((outcome) => [outcome, 0])) as Record<(typeof STATS_OUTCOMES)[number], number>;

/** The rates of some counts: both over the messages handed to the email service (docs/statistics.md). */
export function ratesOf(counts: OutcomeCounts): StatsCounts {
  const sent = counts.sent;
  return { ...counts, bounceRate: sent > 0 ? counts.bounced / sent : null, complaintRate: sent > 0 ? counts.complained / sent : null };
}

function added(a: OutcomeCounts, b: OutcomeCounts): OutcomeCounts {
  return Object.fromEntries(STATS_OUTCOMES.map((outcome) => [outcome, a[outcome] + b[outcome]])) as Record<(typeof STATS_OUTCOMES)[number], number>;
}

function floorTo(at: Date, stepMs: number): Date {
  return new Date(Math.floor(at.getTime() / stepMs) * stepMs);
}

function ceilTo(at: Date, stepMs: number): Date {
  return new Date(Math.ceil(at.getTime() / stepMs) * stepMs);
}

/**
 * The range of a read, on bucket boundaries (UTC): `since` down, `until`
 * up. An empty or reversed range names `since`, a range longer than allowed
 * names `until`.
 */
function rangeOf(since: Date | undefined, until: Date | undefined, now: Date, stepMs: number, defaultMs: number, maxDays: number): { since: Date; until: Date } {
  const end = ceilTo(until ?? now, stepMs);
  const start = floorTo(since ?? new Date(end.getTime() - defaultMs), stepMs);
  const problems: FieldProblem[] = [];
  if (start.getTime() >= end.getTime() || (since !== undefined && since.getTime() >= (until ?? now).getTime())) {
    problems.push({ field: "since", problem: "must be before until" });
  }
  else if (end.getTime() - start.getTime() > maxDays * DAY_MS) problems.push({ field: "until", problem: `must be at most ${maxDays} days after since` });
  if (problems.length > 0) throw new ValidationError(problems);
  return { since: start, until: end };
}

/**
 * The company's sending statistics: counts by outcome per hour or day, the
 * bounce and complaint rates, and its leading tags and templates. Read from
 * hourly aggregates the message store keeps as it records each acceptance
 * and move (never from the message log), so a read costs the same whatever
 * the volume.
 */
export class MailStatistics {
  readonly #store: StatsStore;
  readonly #clock: () => Date;

  constructor(deps: MailStatisticsDependencies) {
    this.#store = deps.store;
    this.#clock = deps.clock ?? (() => new Date());
  }

  async series(command: StatsSeriesCommand): Promise<StatsSeries> {
    const interval = command.interval ?? "day";
    const stepMs = interval === "hour" ? HOUR_MS : DAY_MS;
    const problems: FieldProblem[] = [];
    if (command.tag !== undefined && command.templateId !== undefined) problems.push({ field: "templateId", problem: "cannot be combined with tag" });
    if (command.templateId !== undefined && !isUuid(command.templateId)) problems.push({ field: "templateId", problem: "must be a template id" });
    if (problems.length > 0) throw new ValidationError(problems);
    const range = rangeOf(
      command.since,
      command.until,
      this.#clock(),
      stepMs,
      interval === "hour" ? DAY_MS : 30 * DAY_MS,
      interval === "hour" ? MAX_HOUR_RANGE_DAYS : MAX_DAY_RANGE_DAYS,
    );
    const segment: StatsSegment =
      command.tag !== undefined ? { kind: "tag", tag: command.tag } : command.templateId !== undefined ? { kind: "template", templateId: command.templateId.toLowerCase() } : { kind: "all" };
    const stored = await this.#store.series({ companyId: command.companyId, segment, ...range, intervalHours: interval === "hour" ? 1 : 24 });
    const byStart = new Map(stored.map((bucket) => [bucket.start.getTime(), bucket.counts]));
    const buckets: { start: Date; counts: StatsCounts }[] = [];
    let totals = ZERO;
    for (let at = range.since.getTime(); at < range.until.getTime(); at += stepMs) {
      const counts = byStart.get(at) ?? ZERO;
      totals = added(totals, counts);
      buckets.push({ start: new Date(at), counts: ratesOf(counts) });
    }
    return { buckets, totals: ratesOf(totals), ...range, interval };
  }

  async leaders(command: StatsLeadersCommand): Promise<StatsLeaders> {
    const range = rangeOf(command.since, command.until, this.#clock(), HOUR_MS, 30 * DAY_MS, MAX_LEADERS_RANGE_DAYS);
    const limit = command.limit ?? 5;
    const rows = await this.#store.leaders({ companyId: command.companyId, ...range, limit, minSent: command.minSent ?? 1 });
    const ranked = (kind: StoredLeader["kind"], rank: (row: StoredLeader) => number | null): StatsLeader[] =>
      rows
        .filter((row) => row.kind === kind)
        .flatMap((row) => {
          const place = rank(row);
          return place !== null && place <= limit ? [{ place, leader: { key: row.key, counts: ratesOf(row.counts) } }] : [];
        })
        .sort((a, b) => a.place - b.place)
        .map((entry) => entry.leader);
    return {
      tagsByVolume: ranked("tag", (row) => row.volumeRank),
      tagsByBounceRate: ranked("tag", (row) => row.bounceRank),
      templatesByVolume: ranked("template", (row) => row.volumeRank),
      templatesByBounceRate: ranked("template", (row) => row.bounceRank),
      ...range,
    };
  }
}
