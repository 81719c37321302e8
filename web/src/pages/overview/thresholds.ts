/**
 * The limits mailbox providers and Amazon SES publish, drawn on the
 * overview's rate charts (docs/statistics.md has the sources):
 * - bounce rate: SES reviews an account at 5 % and may pause its sending at 10 %;
 * - complaint (spam) rate: Gmail and Yahoo ask senders to stay below 0.1 %
 *   and never reach 0.3 %.
 */
export interface Threshold {
  /** The rate, in percent. */
  readonly percent: number;
  /** `warn`: stay below; `limit`: trouble beyond. */
  readonly level: "warn" | "limit";
  /** Beside the line. */
  readonly short: string;
  /** In the chart's description and table. */
  readonly label: string;
}

export const BOUNCE_THRESHOLDS: readonly Threshold[] = [
  { percent: 5, level: "warn", short: "review", label: "Amazon SES reviews the account" },
  { percent: 10, level: "limit", short: "pause", label: "Amazon SES may pause sending" },
];

export const COMPLAINT_THRESHOLDS: readonly Threshold[] = [
  { percent: 0.1, level: "warn", short: "keep below", label: "Gmail and Yahoo: keep below" },
  { percent: 0.3, level: "limit", short: "limit", label: "Gmail and Yahoo: never reach" },
];
