// The per-ESP gate on a real database: no row no count, advisory counts over the cap, enforcement exact under concurrency, undo.
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { createSendCounters } from '../../../../shared/sending/counters.js';
import { perEspGate } from '../../../../shared/sending/gates/per-esp.js';
import type { GateDeps, GateSend } from '../../../../shared/sending/gates/types.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertDomain, insertTenant } from '../../../helpers/tenant-rows.js';

async function setup(t: { teardown(fn: () => unknown): void }, enforce: boolean) {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 20 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const tenantId = await insertTenant(sql);
  const domainId = await insertDomain(sql, tenantId);
  const warmup = { tier_caps: [50], reset_after_idle_days: 14, initial_tier: 0, per_esp_enforce: enforce };
  const deps = { db: sql, warmup, counters: createSendCounters(sql, createLogger('silent'), 0) } as unknown as GateDeps;
  // A second process on the same database: its own batched counters, racing the first one's statements.
  const otherProcess = { db: sql, warmup, counters: createSendCounters(sql, createLogger('silent'), 0) } as unknown as GateDeps;
  const at = new Date('2026-11-25T10:00:00Z');
  const send = (to: string): GateSend => ({ tenant: { id: tenantId, status: 'active', is_sandbox: false }, mode: 'live', to, domainId, at });
  const sent = async (provider: string) =>
    (await sql<{ sent: number }[]>`select sent from warmup_esp_daily where tenant_id = ${tenantId} and provider = ${provider}`)[0]?.sent ?? 0;
  return { sql, tenantId, domainId, deps, otherProcess, send, sent, at };
}

t.test('without a row for the provider nothing is counted; advisory counts every send and flags the ones over the cap', async (t) => {
  const s = await setup(t, false);
  t.match(await perEspGate.decide(s.deps, s.send('a@gmail.com')), { outcome: 'continue', detail: { provider: 'gmail', per_esp_limit: null } });
  t.equal(await s.sent('gmail'), 0);
  await s.sql`insert into warmup_esp_caps (tenant_id, provider, daily_limit) values (${s.tenantId}, 'gmail', 2)`;
  const decisions = [];
  for (let i = 0; i < 4; i++) decisions.push(await perEspGate.decide(s.deps, s.send(`r${i}@gmail.com`)));
  t.same(
    decisions.map((d) => d.outcome),
    ['continue', 'continue', 'continue', 'continue'],
  );
  t.same(
    decisions.map((d) => (d as { detail?: { would_have_throttled?: boolean } }).detail?.would_have_throttled ?? false),
    [false, false, true, true],
  );
  t.equal(await s.sent('gmail'), 4);
  const [over] = await s.sql`select over_cap, enforced from warmup_esp_throttles where domain_id = ${s.domainId} and provider = 'gmail'`;
  t.same(over, { over_cap: 2, enforced: 0 });
  await perEspGate.undo!(s.deps, s.send('r0@gmail.com'));
  t.equal(await s.sent('gmail'), 3, 'undo gives a count back');
});

t.test('enforced: 30 parallel sends from two processes against a sub-cap of 5 let exactly 5 through; a sub-cap of 0 sends nothing', async (t) => {
  const s = await setup(t, true);
  await s.sql`insert into warmup_esp_caps (tenant_id, provider, daily_limit) values (${s.tenantId}, 'outlook', 5), (${s.tenantId}, 'yahoo', 0)`;
  const decisions = await Promise.all(Array.from({ length: 30 }, (_, i) => perEspGate.decide(i % 2 ? s.otherProcess : s.deps, s.send(`r${i}@hotmail.com`))));
  t.equal(decisions.filter((d) => d.outcome === 'continue').length, 5);
  for (const d of decisions.filter((d) => d.outcome === 'defer')) t.same((d as { until: Date }).until, new Date('2026-11-26T00:00:00Z'));
  t.equal(await s.sent('outlook'), 5);
  const [over] = await s.sql`select over_cap, enforced from warmup_esp_throttles where domain_id = ${s.domainId} and provider = 'outlook'`;
  t.same(over, { over_cap: 25, enforced: 25 });
  t.match(
    await perEspGate.decide(s.deps, s.send('x@yahoo.com')),
    { outcome: 'defer', detail: { provider: 'yahoo', per_esp_limit: 0 } },
    'a sub-cap of 0 sends nothing',
  );
  t.match(await perEspGate.decide(s.deps, s.send('x@company.example')), { outcome: 'continue', detail: { provider: 'other', per_esp_limit: null } });
});
