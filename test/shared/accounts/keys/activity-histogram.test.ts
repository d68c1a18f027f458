// Latency buckets and the percentile estimate: boundaries, exact cases, and the bucket-width error bound.
import t from 'tap';
import { BUCKET_COUNT, bucketIndex, emptyBuckets, LATENCY_BOUNDS_MS, percentile } from '../../../../shared/accounts/keys/activity-histogram.js';

function histogram(latencies: number[]): number[] {
  const b = emptyBuckets();
  for (const l of latencies) b[bucketIndex(l)]!++;
  return b;
}

/** The nearest-rank percentile of the raw values: what the estimate approximates. */
function exact(latencies: number[], p: number): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}

t.test('a latency falls in the first bucket whose upper bound it does not exceed', async (t) => {
  t.equal(BUCKET_COUNT, LATENCY_BOUNDS_MS.length + 1);
  t.equal(bucketIndex(0), 0);
  t.equal(bucketIndex(0.4), 0);
  t.equal(bucketIndex(1), 0, 'bounds are inclusive');
  t.equal(bucketIndex(1.01), 1);
  t.equal(bucketIndex(100), LATENCY_BOUNDS_MS.indexOf(100));
  t.equal(bucketIndex(100.5), LATENCY_BOUNDS_MS.indexOf(150));
  t.equal(bucketIndex(10_000), LATENCY_BOUNDS_MS.length - 1);
  t.equal(bucketIndex(10_001), LATENCY_BOUNDS_MS.length, 'over the last bound: the open bucket');
  t.equal(emptyBuckets().length, BUCKET_COUNT);
});

t.test('known latencies: 1..100 ms once each has p95 = 95, p50 = 50', async (t) => {
  const values = Array.from({ length: 100 }, (_, i) => i + 1);
  const b = histogram(values);
  t.equal(percentile(b, 0.95), 95, 'the 95th value lies in 75..100 ms, which holds 25 evenly spread values');
  t.equal(percentile(b, 0.5), 50);
  t.equal(percentile(b, 1), 100);
});

t.test('all latencies in one bucket: interpolated inside it', async (t) => {
  const b = histogram(new Array(20).fill(60));
  // 50..75 ms bucket, rank 19 of 20 → 50 + 25 * 19/20.
  t.equal(percentile(b, 0.95), 73.75);
  t.ok(percentile(b, 0.95)! >= 50 && percentile(b, 0.95)! <= 75, 'within the bucket of the true value (60)');
});

t.test('a slow tail decides p95 only when it is over 5 %', async (t) => {
  t.equal(percentile(histogram([...new Array(96).fill(3), ...new Array(4).fill(4000)]), 0.95), 4.97, '4 % slow: p95 stays in the fast bucket (2 + 3 * 95/96)');
  const p = percentile(histogram([...new Array(90).fill(3), ...new Array(10).fill(4000)]), 0.95)!;
  t.ok(p > 3000 && p <= 5000, `10 % slow: p95 in the 3000..5000 bucket (${p})`);
});

t.test('empty → null; the open bucket reports its lower bound', async (t) => {
  t.equal(percentile(emptyBuckets(), 0.95), null);
  t.equal(percentile([], 0.95), null);
  t.equal(percentile(histogram([60_000, 70_000]), 0.95), 10_000);
});

t.test("on pseudo-random latencies the estimate stays within the true p95's bucket", async (t) => {
  let seed = 42;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let round = 0; round < 50; round++) {
    const values = Array.from({ length: 200 + round * 10 }, () => Math.round(Math.exp(random() * 8) * 100) / 100);
    const truth = exact(values, 0.95);
    const estimate = percentile(histogram(values), 0.95)!;
    const i = bucketIndex(truth);
    const lower = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
    const upper = LATENCY_BOUNDS_MS[i] ?? LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
    if (!(estimate >= lower && estimate <= upper)) t.fail(`round ${round}: ${estimate} outside ${lower}..${upper} (true ${truth})`);
  }
  t.pass('50 rounds');
});
