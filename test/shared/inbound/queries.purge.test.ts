// Inbound retention on a real database: old messages go with their recipients and webhook deliveries, unless a workspace mailbox still holds them.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { purgeInboundMessages } from '../../../shared/inbound/queries.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { createTestDatabase } from '../../helpers/db.js';
import { insertDomain, insertTenant } from '../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = connect(db.url, createLogger('silent'));
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});

async function received(tenantId: string, at: Date, o: { mailboxId?: string; webhook?: boolean } = {}): Promise<string> {
  const id = randomUUID();
  await sql`
    insert into inbound_messages (id, received_at, remote_address, mail_from, size_bytes, raw)
    values (${id}, ${at}, '192.0.2.10', 'a@sender.example', 4, ${Buffer.from('x\r\n\r\n')})`;
  const recipientId = randomUUID();
  await sql`insert into inbound_recipients (id, message_id, recipient, kind, tenant_id, created_at)
            values (${recipientId}, ${id}, 'ann@acme.example', 'tenant', ${tenantId}, ${at})`;
  if (o.webhook) {
    await sql`
      insert into inbound_webhook_deliveries (id, tenant_id, inbound_recipient_id, status, attempts, created_at, dead_at)
      values (${randomUUID()}, ${tenantId}, ${recipientId}, 'dead', 1, ${at}, ${at})`;
  }
  if (o.mailboxId) {
    await sql`
      insert into mailbox_messages (id, tenant_id, mailbox_id, inbound_message_id, recipient, received_at)
      values (${randomUUID()}, ${tenantId}, ${o.mailboxId}, ${id}, 'ann@acme.example', ${at})`;
  }
  return id;
}

t.test('messages past retention are deleted with their rows; mailbox mail and recent mail stay', async (t) => {
  const tenantId = await insertTenant(sql);
  const domainId = await insertDomain(sql, tenantId, 'acme.example');
  const mailboxId = randomUUID();
  await sql`insert into mailboxes (id, tenant_id, domain_id, address, created_at, updated_at)
            values (${mailboxId}, ${tenantId}, ${domainId}, 'ann@acme.example', now(), now())`;
  const old = new Date('2026-09-01T00:00:00Z');
  const recent = new Date('2026-11-20T00:00:00Z');
  const cutoff = new Date('2026-10-22T00:00:00Z');
  const gone = [await received(tenantId, old, { webhook: true }), await received(tenantId, old), await received(tenantId, old)];
  const kept = [await received(tenantId, old, { mailboxId }), await received(tenantId, recent, { webhook: true })];

  t.equal(await purgeInboundMessages(sql, cutoff, 2), 3, 'in batches of two: all three old messages without a mailbox copy');
  const left = await sql<{ id: string }[]>`select id from inbound_messages order by received_at`;
  t.same(left.map((r) => r.id).sort(), [...kept].sort(), 'the mailbox copy and the recent message stay');
  const [rows] = await sql<{ recipients: number; deliveries: number }[]>`
    select (select count(*)::int from inbound_recipients where message_id = any(${gone}::uuid[])) as recipients,
           (select count(*)::int from inbound_webhook_deliveries) as deliveries`;
  t.same(rows, { recipients: 0, deliveries: 1 }, "the deleted messages' recipients and dead letter went with them");
  t.equal(await purgeInboundMessages(sql, cutoff), 0, 'a second run finds nothing');

  await sql`delete from mailbox_messages where mailbox_id = ${mailboxId}`;
  t.equal(await purgeInboundMessages(sql, cutoff), 1, 'once deleted from the mailbox, old mail goes at the next run');
});
