// Migration 110 on a database holding inbound webhook deliveries from the pg-boss days: pending rows become due at their creation, finished rows keep
// no due time, and a pending row without one can no longer be written.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { claimDueDeliveries } from '../../../../shared/webhooks/inbound/queries.js';
import { databaseBefore } from '../../../helpers/migration-db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const OUTBOX = 110;

const { sql, apply } = await databaseBefore(t, OUTBOX);

t.test('pending deliveries are due from their creation; finished ones stay without a due time', async (t) => {
  const tenant = await insertTenant(sql);
  const created = new Date('2026-11-30T08:00:00.000Z');
  const delivery = async (status: 'pending' | 'delivered', nextAttemptAt: Date | null) => {
    const [message, recipient, id] = [randomUUID(), randomUUID(), randomUUID()];
    await sql`
      insert into inbound_messages (id, received_at, remote_address, mail_from, size_bytes, raw)
      values (${message}, ${created}, '192.0.2.7', 'ann@sender.example', 3, ${Buffer.from('hi\n')})`;
    await sql`
      insert into inbound_recipients (id, message_id, recipient, kind, tenant_id, created_at)
      values (${recipient}, ${message}, 'support@acme.example', 'tenant', ${tenant}, ${created})`;
    await sql`
      insert into inbound_webhook_deliveries (id, tenant_id, inbound_recipient_id, status, attempts, next_attempt_at, created_at)
      values (${id}, ${tenant}, ${recipient}, ${status}, 0, ${nextAttemptAt}, ${created})`;
    return id;
  };
  const fresh = await delivery('pending', null);
  const retrying = await delivery('pending', new Date('2026-11-30T09:00:00.000Z'));
  const delivered = await delivery('delivered', null);

  t.same(await apply(), [OUTBOX], 'applies where pg-boss was never installed (its retired jobs are removed only when its table exists)');
  const due = new Map(
    (await sql<{ id: string; next_attempt_at: Date | null }[]>`select id, next_attempt_at from inbound_webhook_deliveries`).map((r) => [
      r.id,
      r.next_attempt_at?.toISOString() ?? null,
    ]),
  );
  t.equal(due.get(fresh), created.toISOString(), 'a delivery waiting for its first job: due at its creation');
  t.equal(due.get(retrying), '2026-11-30T09:00:00.000Z', 'a delivery waiting for a retry keeps its time');
  t.equal(due.get(delivered), null);

  const claimed = await claimDueDeliveries(sql, {
    dueBy: new Date('2026-11-30T08:30:00.000Z'),
    leaseUntil: new Date('2026-11-30T08:31:00.000Z'),
    at: new Date('2026-11-30T08:30:00.000Z'),
    limit: 10,
  });
  t.same(
    claimed.map((c) => c.id),
    [fresh],
    'the claim loop takes what is due, and only that',
  );
  await t.rejects(delivery('pending', null), /due_check/, 'a pending delivery without a due time is refused');
});
