// Percentiles of measured samples, for the benchmarks' latency figures.

/** The p-th percentile (nearest rank) of ascending `sorted`; NaN when there are none. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
