// Benchmark: the cost of logging refusals for GET /admin/ratelimits, on the limiter's refusal path and in its sync.
//
// Goal: recording a refusal (RateLimiter.hit with the tenant id) adds under 1 µs per refused request over the same
// refusal unrecorded (the peer, measured in the same run, alternating rounds): nothing next to the hundreds of µs a
// refused HTTP request costs anyway. A sync writes the refusals of TENANTS tenants in one statement. The hit figures are
// in-process calls on a bucket already read (no database round trip per hit).
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { connect } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/kernel/log.js';
import { RateLimiter, type Bucket } from '../shared/limits/rate-limits/limiter.js';
import { insertTenant } from '../shared/accounts/tenants/queries.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const HITS = 200_000;
const ROUNDS = 6;
const TENANTS = 500;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

export default async function runRateLimitsBench(): Promise<void> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  await admin.unsafe(`create database "${dbName}"`);
  const log = createLogger('silent');
  const sql = connect(dbUrl.toString(), log, { max: 4 });
  try {
    await migrate(sql);
    const tenants: string[] = [];
    for (let i = 0; i < TENANTS; i++) tenants.push((await insertTenant(sql, { name: `Bench ${i}`, slug: `bench-rl-${i}` })).id);
    // A frozen clock: every hit lands in one full one-second window, so every hit is a refusal.
    const now = Math.floor(Date.now() / 1000) * 1000 + 500;
    const limiter = new RateLimiter(sql, log, 200, () => now);
    const buckets: Bucket[][] = tenants.map((id) => [{ id: `tenant:${id}:sec`, limit: 1, windowSeconds: 1 }]);
    for (let i = 0; i < TENANTS; i++) await limiter.hit(buckets[i]!); // fill each bucket (and read its window once)

    const round = async (record: boolean): Promise<number> => {
      const started = performance.now();
      for (let i = 0; i < HITS; i++) {
        const t = i % TENANTS;
        await limiter.hit(buckets[t]!, record ? tenants[t] : undefined);
      }
      return HITS / ((performance.now() - started) / 1000);
    };
    const recorded: number[] = [];
    const peer: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      peer.push(await round(false));
      recorded.push(await round(true));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const syncStarted = performance.now();
    await limiter.sync();
    const syncMs = performance.now() - syncStarted;
    const [row] = await sql<{ rows: number; total: number }[]>`select count(*)::int as rows, coalesce(sum(count), 0)::int as total from rate_limit_throttles`;
    const overhead = (median(peer) / median(recorded) - 1) * 100;
    const addedNs = (1 / median(recorded) - 1 / median(peer)) * 1e9;
    process.stdout.write(
      [
        `ratelimits bench: load average ${load()}`,
        `   refused hits/s, unrecorded (peer):  ${median(peer).toFixed(0)} (median of ${ROUNDS} rounds of ${HITS})`,
        `   refused hits/s, recorded:           ${median(recorded).toFixed(0)}  (${overhead >= 0 ? '+' : ''}${overhead.toFixed(1)}% time per hit: ` +
          `${addedNs.toFixed(0)} ns added per refusal; goal < 1000 ns: ${addedNs < 1000 ? 'met' : 'NOT met'})`,
        `   one sync writing ${row!.rows} (tenant, minute) rows for ${row!.total} refusals: ${syncMs.toFixed(1)} ms`,
        '',
      ].join('\n'),
    );
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
    await admin.end();
  }
}
