// What changed between acceptance and delivery is honoured: a tenant suspended or put in the sandbox, a recipient suppressed or unsubscribed meanwhile.
import t from 'tap';
import { monthlyUsage } from '../../../../shared/limits/quota/usage.js';
import { suppress } from '../../../../shared/audiences/suppressions/service.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const { sql, deps, sender, send, settled, events, outbound } = await deliveryFixture(t, { env: { MAILPATH_OUTBOUND_RELAY: sink.address } });

t.beforeEach(() => quietSink(sink));

t.test('a tenant suspended after its sends were queued sends nothing more: they are dropped, the quota given back', async (t) => {
  const from = await sender();
  const queued = await send(from);
  await sql`update tenants set status = 'suspended' where id = ${from.tenant.id}`;
  await outbound(t);
  const row = await settled(queued.id, ['dropped', 'delivered']);
  t.equal(row.status, 'dropped');
  t.match(row.status_detail, /tenant is suspended/);
  t.match((await events(queued.id)).find((e) => e.type === 'dropped')?.detail, { reason: 'tenant_suspended' });
  t.equal((await monthlyUsage(sql, from.tenant.id, new Date())).used, 0);
  t.equal(sink.messages.length, 0, 'nothing reached the receiver');
});

t.test('a tenant put in the sandbox after acceptance has its queued mail intercepted as simulated', async (t) => {
  const from = await sender();
  const queued = await send(from);
  await sql`update tenants set is_sandbox = true where id = ${from.tenant.id}`;
  await outbound(t);
  const row = await settled(queued.id, ['simulated', 'delivered']);
  t.equal(row.status, 'simulated');
  t.equal(sink.messages.length, 0);
});

t.test('a recipient suppressed after acceptance is dropped, not delivered', async (t) => {
  const from = await sender();
  const queued = await send(from);
  await suppress(sql, from.tenant.id, { email: queued.to, reason: 'manual', source: 'api', at: new Date() });
  await outbound(t);
  const row = await settled(queued.id, ['dropped', 'delivered']);
  t.equal(row.status, 'dropped');
  t.match((await events(queued.id)).find((e) => e.type === 'dropped')?.detail, { reason: 'suppressed' });
  t.equal(sink.messages.length, 0);
});

t.test('a recipient who became an unsubscribed contact, or was erased (hash-only entry), after acceptance is dropped', async (t) => {
  const from = await sender();
  const unsubscribed = await send(from);
  const erased = await send(from);
  await sql`insert into contacts (tenant_id, email, status, created_at, updated_at)
            values (${from.tenant.id}, ${unsubscribed.to}, 'unsubscribed', now(), now())`;
  // The hash-only entry an erasure leaves, without the erasure's rewriting of the log (which would drop the send itself).
  await sql`insert into suppressions (tenant_id, email, email_hash, reason, source, created_at)
            values (${from.tenant.id}, null, sha256(convert_to(${erased.to}::text, 'UTF8')), 'erased', 'erasure', now())`;
  await outbound(t);
  for (const queued of [unsubscribed, erased]) {
    t.equal((await settled(queued.id, ['dropped', 'delivered'])).status, 'dropped');
    t.match((await events(queued.id)).find((e) => e.type === 'dropped')?.detail, { reason: 'suppressed' });
  }
  t.equal(sink.messages.length, 0);
});

t.test('two processes waking the same warm-up deferral: one claims it, and the day counts it once', async (t) => {
  const { startOutbound } = await import('../../../../mta/outbound/deliver/start.js');
  const { dailyCount } = await import('../../../../shared/deliverability/warmup/queries.js');
  const { utcDay } = await import('../../../../shared/deliverability/warmup/tiers.js');
  const from = await sender();
  const today = utcDay(new Date());
  const cap = deps.config.warmup.tier_caps[0]!;
  await sql`insert into warmup_daily_counters (tenant_id, domain_id, day, sent) values (${from.tenant.id}, ${from.domain.id}, ${today}, ${cap})`;
  const deferred = await send(from);
  t.equal((await settled(deferred.id, ['deferred'])).status, 'deferred');
  // Two delivery loops on the same queue, as two outbound processes would run.
  const [one, two] = await Promise.all([startOutbound(deps), startOutbound(deps)]);
  t.teardown(() => Promise.all([one.stop(), two.stop()]));
  // A new day for the counter, and the deferral due now: the wake-up is allowed and counts once.
  await sql`delete from warmup_daily_counters where domain_id = ${from.domain.id}`;
  await sql`update delivery_queue set due_at = now() where send_id = ${deferred.id}`;
  await settled(deferred.id, ['delivered']);
  t.equal(await dailyCount(sql, from.tenant.id, from.domain.id, today), 1, 'counted once');
  t.equal(sink.messages.length, 1, 'delivered once');
});
