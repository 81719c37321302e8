export {
  MAX_DAY_RANGE_DAYS,
  MAX_HOUR_RANGE_DAYS,
  MailStatistics,
  type MailStatisticsDependencies,
  type StatsCounts,
  type StatsInterval,
  type StatsLeader,
  type StatsLeaders,
  type StatsLeadersCommand,
  type StatsSeries,
  type StatsSeriesCommand,
  ratesOf,
} from "./mail-statistics.ts";
export { type OutcomeCounts, STATS_OUTCOMES, type StatsOutcome, type StatsStore } from "./ports.ts";
