// Warm-up gate on a real database: exact daily caps under concurrency, deferral to 00:00 UTC, suppression wins, tiers and idle reset.
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { warmupGate, type WarmupDecision } from '../../../../shared/deliverability/warmup/gate.js';
import { dailyCount } from '../../../../shared/deliverability/warmup/queries.js';
import { capForTier, nextUtcMidnight, utcDay, utcMonth } from '../../../../shared/deliverability/warmup/tiers.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertDomain, insertTenant } from '../../../helpers/tenant-rows.js';

const config = { tier_caps: [50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000], reset_after_idle_days: 14, initial_tier: 0 };

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await createTestDatabase();
  // A pool wide enough that the parallel sends really run at once.
  const sql = connect(db.url, createLogger('silent'), { max: 20 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const tenantId = await insertTenant(sql);
  return { sql, tenantId, domainId: await insertDomain(sql, tenantId) };
}

t.test('tier arithmetic', async (t) => {
  t.equal(capForTier(config, 0), 50);
  t.equal(capForTier(config, 10), 100_000);
  t.equal(capForTier(config, 99), 100_000, 'above the table: fully warm');
  t.equal(utcDay(new Date('2026-11-21T23:59:59.999Z')), '2026-11-21');
  t.same(nextUtcMidnight(new Date('2026-12-31T23:00:00Z')), new Date('2027-01-01T00:00:00Z'));
  t.same(nextUtcMidnight(new Date('2026-11-21T00:00:00Z')), new Date('2026-11-22T00:00:00Z'));
  t.equal(utcMonth(new Date('2026-11-30T23:59:59Z')), '2026-11-01');
});

t.test('200 parallel sends against a cap of 50 let exactly 50 through; the rest defer to the next 00:00 UTC', async (t) => {
  const { sql, tenantId, domainId } = await setup(t);
  const at = new Date('2026-11-21T15:30:00Z');
  const decisions = await Promise.all(Array.from({ length: 200 }, () => warmupGate(sql, config, { tenantId, domainId, at, recipientSuppressed: false })));
  const by = (o: WarmupDecision['outcome']) => decisions.filter((d) => d.outcome === o);
  t.equal(by('allow').length, 50);
  t.equal(by('defer').length, 150);
  t.same(
    new Set(by('allow').map((d) => (d as { sentToday: number }).sentToday)),
    new Set(Array.from({ length: 50 }, (_, i) => i + 1)),
    'each allowed send got its own count',
  );
  for (const d of by('defer')) t.same((d as { until: Date }).until, new Date('2026-11-22T00:00:00Z'));
  t.equal(await dailyCount(sql, tenantId, domainId, '2026-11-21'), 50, 'the counter stopped at the cap');

  const tomorrow = await warmupGate(sql, config, { tenantId, domainId, at: new Date('2026-11-22T00:00:00Z'), recipientSuppressed: false });
  t.match(tomorrow, { outcome: 'allow', sentToday: 1 }, 'a new UTC day, a new allowance');
});

t.test('over the cap a suppressed recipient is dropped, not deferred; below it the gate allows', async (t) => {
  const { sql, tenantId, domainId } = await setup(t);
  const tight = { ...config, tier_caps: [2, 4] };
  const at = new Date('2026-11-21T10:00:00Z');
  t.match(
    await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: true }),
    { outcome: 'allow' },
    'below the cap the gate does not judge suppression',
  );
  await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: false });
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: true }), { outcome: 'drop', reason: 'suppressed', cap: 2 });
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: false }), { outcome: 'defer', cap: 2 });
});

t.test('counters are per (tenant, domain); tiers raise the cap; a long idle spell resets to tier 0', async (t) => {
  const { sql, tenantId, domainId } = await setup(t);
  const other = await insertDomain(sql, tenantId);
  const tight = { ...config, tier_caps: [1, 3], reset_after_idle_days: 14, initial_tier: 0 };
  const at = new Date('2026-11-21T10:00:00Z');
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: false }), { outcome: 'allow', tier: 0, cap: 1 });
  t.match(
    await warmupGate(sql, tight, { tenantId, domainId: other, at, recipientSuppressed: false }),
    { outcome: 'allow' },
    'another domain has its own counter',
  );
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: false }), { outcome: 'defer' });

  await sql`update domain_warmup set tier = 1 where domain_id = ${domainId}`;
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at, recipientSuppressed: false }), { outcome: 'allow', tier: 1, cap: 3, sentToday: 2 });

  const idle = new Date(at.getTime() + 15 * 86_400_000);
  t.match(await warmupGate(sql, tight, { tenantId, domainId, at: idle, recipientSuppressed: false }), { outcome: 'allow', tier: 0, cap: 1 });
  const [row] = await sql<{ tier: number; last_send_at: Date }[]>`select tier, last_send_at from domain_warmup where domain_id = ${domainId}`;
  t.equal(row!.tier, 0, 'reset stored');
  t.same(row!.last_send_at, idle, 'first send of the day recorded');
});

t.test('with initial_tier a new domain starts there, and a long idle spell returns it there, not to tier 0', async (t) => {
  const { sql, tenantId, domainId } = await setup(t);
  const warm = { ...config, initial_tier: 5 };
  const at = new Date('2026-11-21T10:00:00Z');
  t.match(await warmupGate(sql, warm, { tenantId, domainId, at, recipientSuppressed: false }), { outcome: 'allow', tier: 5, cap: 2500 });
  const [created] = await sql<{ tier: number }[]>`select tier from domain_warmup where domain_id = ${domainId}`;
  t.equal(created!.tier, 5, 'the row is created at the initial tier');

  await sql`update domain_warmup set tier = 7 where domain_id = ${domainId}`;
  const idle = new Date(at.getTime() + 15 * 86_400_000);
  t.match(await warmupGate(sql, warm, { tenantId, domainId, at: idle, recipientSuppressed: false }), { outcome: 'allow', tier: 5, cap: 2500 });
  t.equal((await sql<{ tier: number }[]>`select tier from domain_warmup where domain_id = ${domainId}`)[0]!.tier, 5, 'reset to the initial tier');

  await sql`update domain_warmup set tier = 2, last_send_at = ${at} where domain_id = ${domainId}`;
  const later = new Date(idle.getTime() + 15 * 86_400_000);
  t.match(
    await warmupGate(sql, warm, { tenantId, domainId, at: later, recipientSuppressed: false }),
    { tier: 2 },
    'a domain below the initial tier (demoted) is not raised by idling',
  );
});
