// Outbound gates on a real database: each gate's decision, the design's order, and what a stopped send does not consume.
import t from 'tap';
import { runGates } from '../../../../shared/sending/gates/pipeline.js';
import { quotaGate } from '../../../../shared/sending/gates/quota.js';
import { sandboxGate } from '../../../../shared/sending/gates/sandbox.js';
import { suppressionGate } from '../../../../shared/sending/gates/suppression.js';
import { suspendedGate } from '../../../../shared/sending/gates/suspended.js';
import { testKeyGate } from '../../../../shared/sending/gates/test-key.js';
import type { GateDeps, GateSend } from '../../../../shared/sending/gates/types.js';
import { warmupGate } from '../../../../shared/sending/gates/warmup.js';
import { connect } from '../../../../shared/db/connection.js';
import { createSendCounters } from '../../../../shared/sending/counters.js';
import { createSendLookups } from '../../../../shared/sending/lookups.js';
import { createEspHolds } from '../../../../shared/sending/esp-holds.js';
import { espSuppressionGate } from '../../../../shared/sending/gates/esp-suppression.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { monthlyUsage } from '../../../../shared/limits/quota/usage.js';
import { suppress } from '../../../../shared/audiences/suppressions/service.js';
import { dailyCount } from '../../../../shared/deliverability/warmup/queries.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertDomain, insertTenant } from '../../../helpers/tenant-rows.js';

const at = new Date('2026-11-21T12:00:00Z');

async function setup(t: { teardown(fn: () => unknown): void }, warmupCaps = [50, 100]) {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const tenantId = await insertTenant(sql);
  const domainId = await insertDomain(sql, tenantId);
  const deps: GateDeps = {
    db: sql,
    warmup: { tier_caps: warmupCaps, reset_after_idle_days: 14, initial_tier: 0 },
    lookups: createSendLookups(sql, createLogger('silent')),
    counters: createSendCounters(sql, createLogger('silent'), 0),
    // No caching here (TTL 0): each decision reads the suppressions in force, so a test can change them between sends.
    espHolds: createEspHolds(sql, { now: () => at }, 0),
  };
  const send = (over: Partial<GateSend> = {}): GateSend => ({
    tenant: { id: tenantId, status: 'active', is_sandbox: false },
    mode: 'live',
    to: 'rcpt@example.org',
    domainId,
    at,
    ...over,
  });
  const used = async () => (await monthlyUsage(sql, tenantId, at)).used;
  const warm = () => dailyCount(sql, tenantId, domainId, '2026-11-21');
  return { sql, tenantId, domainId, deps, send, used, warm };
}

t.test('each gate on its own', async (t) => {
  const s = await setup(t);
  t.match(await suspendedGate.decide(s.deps, s.send()), { gate: 'suspended', outcome: 'continue' });
  const refused = await suspendedGate.decide(s.deps, s.send({ tenant: { id: s.tenantId, status: 'suspended', is_sandbox: false } }));
  t.same(refused, { gate: 'suspended', outcome: 'refuse', refusal: { reason: 'tenant_suspended' } });
  t.match(await testKeyGate.decide(s.deps, s.send({ mode: 'test' })), { outcome: 'simulate', reason: 'test_key' });
  t.match(await testKeyGate.decide(s.deps, s.send()), { outcome: 'continue' });
  t.match(await sandboxGate.decide(s.deps, s.send({ tenant: { id: s.tenantId, status: 'active', is_sandbox: true } })), {
    outcome: 'simulate',
    reason: 'sandbox',
  });
  t.match(await sandboxGate.decide(s.deps, s.send()), { outcome: 'continue' });
  await suppress(s.sql, s.tenantId, { email: 'Gone@Example.org', reason: 'hard_bounce', source: 'bounce', at });
  t.match(await suppressionGate.decide(s.deps, s.send({ to: 'gone@example.org' })), { outcome: 'drop', reason: 'suppressed' });
  t.match(await suppressionGate.decide(s.deps, s.send()), { outcome: 'continue' });
  t.match(await quotaGate.decide(s.deps, s.send()), { outcome: 'continue', detail: { used: 1, cap: 3000 } });
  t.match(await warmupGate.decide(s.deps, s.send()), { outcome: 'continue', detail: { tier: 0, cap: 50, sent_today: 1 } });
});

t.test('the quota gate refuses at the cap with the figures (used, cap), counting nothing', async (t) => {
  const s = await setup(t);
  await s.sql`insert into tenant_monthly_usage (tenant_id, month, sent) values (${s.tenantId}, '2026-11-01', 3000)`;
  t.same(await quotaGate.decide(s.deps, s.send()), { gate: 'quota', outcome: 'refuse', refusal: { reason: 'quota_exceeded', used: 3000, cap: 3000 } });
  t.equal(await s.used(), 3000);
});

t.test('each counting gate undoes its own count; undoGates gives back what the gates that let a send through counted', async (t) => {
  const s = await setup(t);
  const { undoGates } = await import('../../../../shared/sending/gates/pipeline.js');
  const through = await runGates(s.deps, s.send());
  t.equal(await s.used(), 1);
  t.equal(await s.warm(), 1);
  await undoGates(s.deps, s.send(), through.decisions);
  t.equal(await s.used(), 0, 'the quota gate gave its count back');
  t.equal(await s.warm(), 0, 'the warm-up gate gave its count back');
  t.equal(suspendedGate.undo, undefined, 'gates that count nothing have no undo');
});

t.test('the pipeline runs in order and stops at the first decision; a stopped send consumes nothing after it', async (t) => {
  const s = await setup(t, [1, 2]);
  const suspendedTestKey = await runGates(s.deps, s.send({ mode: 'test', tenant: { id: s.tenantId, status: 'suspended', is_sandbox: false } }));
  t.match(suspendedTestKey.final, { gate: 'suspended', outcome: 'refuse' }, 'a test key on a suspended tenant is refused');
  t.equal(suspendedTestKey.decisions.length, 1);

  const simulated = await runGates(s.deps, s.send({ mode: 'test', tenant: { id: s.tenantId, status: 'active', is_sandbox: true } }));
  t.match(simulated.final, { gate: 'test_key', outcome: 'simulate' });
  const sandboxed = await runGates(s.deps, s.send({ tenant: { id: s.tenantId, status: 'active', is_sandbox: true } }));
  t.match(sandboxed.final, { gate: 'sandbox', outcome: 'simulate' });
  await suppress(s.sql, s.tenantId, { email: 'gone@example.org', reason: 'manual', source: 'api', at });
  t.match((await runGates(s.deps, s.send({ to: 'gone@example.org' }))).final, { gate: 'suppression', outcome: 'drop' });
  t.equal(await s.used(), 0, 'test-key, sandbox and dropped sends use no quota');
  t.equal(await s.warm(), 0, 'nor warm-up allowance');

  const sent = await runGates(s.deps, s.send());
  t.same(
    sent.decisions.map((d) => d.gate),
    ['suspended', 'test_key', 'sandbox', 'suppression', 'quota', 'esp_suppression', 'per_esp', 'warmup'],
  );
  t.match(sent.final, { gate: 'warmup', outcome: 'continue' });
  const deferred = await runGates(s.deps, s.send());
  t.match(deferred.final, { gate: 'warmup', outcome: 'defer', until: new Date('2026-11-22T00:00:00Z') });
  t.equal(await s.used(), 2, 'a deferred live send counts toward the month (it will be sent)');
  t.equal(await s.warm(), 1, "but not toward today's warm-up allowance");
});

t.test('a provider under an automatic suppression gets no new mail from the tenant until it expires; others and other tenants are not held', async (t) => {
  const s = await setup(t);
  const until = new Date(at.getTime() + 3 * 3_600_000);
  const raise = (tenantId: string, provider: string, expiresAt: Date, revoked: Date | null = null) => s.sql`
    insert into esp_suppressions (tenant_id, provider, reason, refusals, window_minutes, triggered_at, expires_at, revoked_at)
    values (${tenantId}, ${provider}, 'blocked', 10, 15, ${at}, ${expiresAt}, ${revoked})`;
  await raise(s.tenantId, 'gmail', until);
  await raise(s.tenantId, 'yahoo', new Date(at.getTime() - 1000), null);
  await raise(s.tenantId, 'outlook', until, at);
  const otherTenant = await insertTenant(s.sql);

  t.same(await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@gmail.com' })), {
    gate: 'esp_suppression',
    outcome: 'defer',
    until,
    detail: { provider: 'gmail' },
  });
  t.match(await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@googlemail.com' })), { outcome: 'defer', until }, 'the provider, not the domain');
  t.match(await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@yahoo.com' })), { outcome: 'continue' }, 'an expired suppression holds nothing');
  t.match(await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@outlook.com' })), { outcome: 'continue' }, 'nor a revoked one');
  t.match(await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@example.org' })), { outcome: 'continue' }, 'nor other providers');
  t.match(
    await espSuppressionGate.decide(s.deps, s.send({ to: 'ann@gmail.com', tenant: { id: otherTenant, status: 'active', is_sandbox: false } })),
    { outcome: 'continue' },
    'nor another tenant',
  );

  const held = await runGates(s.deps, s.send({ to: 'bob@gmail.com' }));
  t.match(held.final, { gate: 'esp_suppression', outcome: 'defer', until });
  t.equal(await s.used(), 1, 'a held send counts toward the month at acceptance, as any deferred send (it will be sent)');
  t.equal(await s.warm(), 0, 'but takes no warm-up allowance: its wake-up passes the warm-up gate');
});

t.test('the per-provider holds are read at most once per TTL for every send that asks', async (t) => {
  const s = await setup(t);
  let now = at.getTime();
  const holds = createEspHolds(s.sql, { now: () => new Date(now) }, 5000);
  t.equal(await holds.heldUntil(s.tenantId, 'gmail', at), null);
  const until = new Date(at.getTime() + 3_600_000);
  await s.sql`insert into esp_suppressions (tenant_id, provider, reason, refusals, window_minutes, triggered_at, expires_at)
              values (${s.tenantId}, 'gmail', 'deferral_storm', 50, 15, ${at}, ${until})`;
  t.equal(await holds.heldUntil(s.tenantId, 'gmail', at), null, 'within the TTL the cached set answers');
  now += 5000;
  t.same(await holds.heldUntil(s.tenantId, 'gmail', new Date(now)), until, 'after it, a suppression raised meanwhile holds');
});

t.test('a gate that throws reports what the gates before it decided', async (t) => {
  const { deps, send } = await setup(t);
  const { GateFailure } = await import('../../../../shared/sending/gates/pipeline.js');
  const failing = {
    name: 'warmup' as const,
    decide: async (): Promise<never> => {
      throw new Error('database gone');
    },
  };
  const err = await runGates(deps, send(), [suspendedGate, quotaGate, failing]).catch((e: unknown) => e);
  t.ok(err instanceof GateFailure);
  t.equal(
    (err as InstanceType<typeof GateFailure>).cause instanceof Error && ((err as InstanceType<typeof GateFailure>).cause as Error).message,
    'database gone',
  );
  t.same(
    (err as InstanceType<typeof GateFailure>).decisions.map((d) => `${d.gate}:${d.outcome}`),
    ['suspended:continue', 'quota:continue'],
  );
});

t.test('the delivery-time gates are the acceptance gates that can change after it, in the same order, none counting', async (t) => {
  const { DELIVERY_GATES, GATES } = await import('../../../../shared/sending/gates/pipeline.js');
  t.same(
    DELIVERY_GATES.map((g) => g.name),
    ['suspended', 'sandbox', 'suppression'],
  );
  const order = DELIVERY_GATES.map((g) => GATES.indexOf(g));
  t.ok(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1]!)),
    'a subsequence of GATES',
  );
  t.ok(
    DELIVERY_GATES.every((g) => g.undo === undefined),
    'no gate that counts runs twice',
  );
});
