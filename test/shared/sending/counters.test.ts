// Batched send counters on a real database: one statement per tick still admits exactly the cap, each send gets its own count, tenants and domains stay apart.
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { monthlyUsage } from '../../../shared/limits/quota/usage.js';
import { warmupGate } from '../../../shared/deliverability/warmup/gate.js';
import { dailyCount } from '../../../shared/deliverability/warmup/queries.js';
import { createSendCounters } from '../../../shared/sending/counters.js';
import { createTestDatabase } from '../../helpers/db.js';
import { insertDomain, insertTenant } from '../../helpers/tenant-rows.js';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 20 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  await sql`insert into plans (id, name, monthly_send_cap) values ('fifty', 'Fifty', 50), ('five', 'Five', 5), ('none', 'None', 0)`;
  return sql;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

t.test('quota: 120 sends in one tick against a cap of 50 get exactly 50 grants, numbered 1..50 in arrival order', async (t) => {
  const sql = await setup(t);
  const counters = createSendCounters(sql, createLogger('silent'), 0);
  const tenant = await insertTenant(sql, 'fifty');
  const other = await insertTenant(sql, 'five');
  const noPlan = await insertTenant(sql, 'none');
  const at = new Date('2026-11-21T10:00:00Z');
  const asks = [...range(120).map(() => counters.takeQuota(tenant, at)), ...range(8).map(() => counters.takeQuota(other, at)), counters.takeQuota(noPlan, at)];
  const answers = await Promise.all(asks);
  const mine = answers.slice(0, 120);
  t.same(
    mine.slice(0, 50).map((a) => a.used),
    range(50),
    'the first 50 askers are counted, in order',
  );
  t.ok(
    mine.slice(50).every((a) => a.used === undefined && a.cap === 50),
    'the rest are refused',
  );
  t.same(
    answers.slice(120, 128).map((a) => a.used),
    [1, 2, 3, 4, 5, undefined, undefined, undefined],
    "another tenant's counter is its own",
  );
  t.same(answers[128], { used: undefined, cap: 0 }, 'a zero cap admits nothing');
  t.same(await monthlyUsage(sql, tenant, at), { used: 50, cap: 50 });

  // Later ticks continue from the stored count, and several ticks racing stay exact.
  const other2 = await insertTenant(sql, 'fifty');
  await counters.takeQuota(other2, at);
  const racing = await Promise.all(range(10).map(async () => Promise.all(range(10).map(() => counters.takeQuota(other2, at)))));
  const used = racing
    .flat()
    .map((a) => a.used)
    .filter((u): u is number => u !== undefined)
    .sort((a, b) => a - b);
  t.same(used, range(50).slice(1), 'ten batches of ten after one send: counts 2..50 each given once');
});

t.test('warm-up: 200 parallel gate runs with batched counters let exactly 50 through, per (tenant, domain)', async (t) => {
  const sql = await setup(t);
  const counters = createSendCounters(sql, createLogger('silent'), 0);
  const tenant = await insertTenant(sql);
  const [d1, d2] = [await insertDomain(sql, tenant), await insertDomain(sql, tenant)];
  const config = { tier_caps: [50, 100], reset_after_idle_days: 14, initial_tier: 0 };
  const at = new Date('2026-11-21T15:30:00Z');
  const run = (domainId: string) => warmupGate(sql, config, { tenantId: tenant, domainId, at, recipientSuppressed: false }, counters);
  const decisions = await Promise.all([...range(200).map(() => run(d1)), ...range(30).map(() => run(d2))]);
  const allowed = decisions.slice(0, 200).filter((d) => d.outcome === 'allow') as { sentToday: number }[];
  t.same(
    allowed.map((d) => d.sentToday).sort((a, b) => a - b),
    range(50),
  );
  t.ok(decisions.slice(0, 200).filter((d) => d.outcome === 'defer').length === 150, 'the rest defer');
  t.ok(
    decisions.slice(200).every((d) => d.outcome === 'allow'),
    'the other domain has its own allowance',
  );
  t.equal(await dailyCount(sql, tenant, d1, '2026-11-21'), 50);
  t.equal(await dailyCount(sql, tenant, d2, '2026-11-21'), 30);
  const [row] = await sql<{ tier: number }[]>`select tier from domain_warmup where domain_id = ${d2}`;
  t.equal(row!.tier, 0, 'the warm-up row was created at tier 0 by the batched read');
});
