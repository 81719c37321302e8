/** Small statistics for benchmark figures. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Nearest-rank percentile (p in 0..100) of unsorted values; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1] as number;
}

/** Min / median / max of the repeated runs of one figure. */
export interface Spread {
  readonly min: number;
  readonly median: number;
  readonly max: number;
  readonly runs: readonly number[];
}

export function spread(runs: readonly number[]): Spread {
  const finite = runs.filter((value) => Number.isFinite(value));
  if (finite.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN, runs };
  return { min: Math.min(...finite), median: median(finite), max: Math.max(...finite), runs };
}
