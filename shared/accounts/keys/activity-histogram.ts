// Latency histograms of API key requests: fixed millisecond buckets, and a percentile estimated from their counts.

/**
 * Upper bounds (ms, inclusive) of the buckets; one more bucket after the last holds everything slower.
 * Roughly logarithmic, so the relative error of an estimate is similar for fast and slow routes.
 * The order is stored in api_key_activity.latency_buckets: append only, never reorder.
 */
export const LATENCY_BOUNDS_MS = [1, 2, 5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 1500, 2000, 3000, 5000, 10000] as const;

export const BUCKET_COUNT = LATENCY_BOUNDS_MS.length + 1;

/** The bucket a latency falls in. */
export function bucketIndex(latencyMs: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (latencyMs <= LATENCY_BOUNDS_MS[i]!) return i;
  return LATENCY_BOUNDS_MS.length;
}

export function emptyBuckets(): number[] {
  return new Array<number>(BUCKET_COUNT).fill(0);
}

/**
 * The p-th percentile (0 < p <= 1) of the latencies counted in `buckets`, or null when there are none.
 *
 * Precision: individual latencies are not kept, only how many fell in each bucket, so the answer is exact
 * only to the bucket: the true percentile lies in the bucket this picks, and inside it the latencies are
 * assumed evenly spread (linear interpolation between the bucket's bounds). The error is therefore at most
 * the bucket's width: under 1 ms below 2 ms, about a third of the value from 50 ms up (e.g. 75..100 ms).
 * The open last bucket (over 10 s) has no upper bound; a percentile landing there is reported as 10000.
 */
export function percentile(buckets: readonly number[], p: number): number | null {
  const total = buckets.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  // The rank of the wanted value among the sorted latencies (1-based, nearest-rank definition).
  const rank = Math.max(1, Math.ceil(p * total));
  let before = 0;
  for (let i = 0; i < buckets.length; i++) {
    const inBucket = buckets[i] ?? 0;
    if (inBucket > 0 && before + inBucket >= rank) {
      if (i >= LATENCY_BOUNDS_MS.length) return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
      const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const upper = LATENCY_BOUNDS_MS[i]!;
      const value = lower + ((upper - lower) * (rank - before)) / inBucket;
      return Math.round(value * 100) / 100;
    }
    before += inBucket;
  }
  return null;
}
