// What changed between acceptance and delivery is honoured: a tenant suspended or put in the sandbox, a recipient suppressed meanwhile.
import t from 'tap';
import { monthlyUsage } from '../../../../shared/quota/usage.js';
import { suppress } from '../../../../shared/suppressions/service.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const { sql, sender, send, settled, events, outbound } = await deliveryFixture(t, { env: { MAILPATH_OUTBOUND_RELAY: sink.address } });

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
