// The one bounce rule both paths use (an attempt's SMTP reply and a DSN): status, event, and a hard bounce's recipient suppressed for the send's tenant only.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { recordBounce } from '../../../shared/delivery/outcomes.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { createTestDatabase } from '../../helpers/db.js';
import { insertDomain, insertTenant } from '../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = connect(db.url, createLogger('silent'), { max: 2 });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});

async function sendOf(tenantId: string, to: string) {
  const id = randomUUID();
  const domainId = await insertDomain(sql, tenantId);
  await sql`
    insert into sends (id, tenant_id, domain_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    values (${id}, ${tenantId}, ${domainId}, 'api', 'live', 'delivered', 'a@example.test', ${to}, 'S', ${`${id}@mx.test`}, 'b@mx.test', now(), now())`;
  return { id, tenant_id: tenantId, message_id: `${id}@mx.test`, to_email: to };
}

t.test('a hard bounce: bounced, its event, the recipient suppressed for its tenant only', async (t) => {
  const tenant = await insertTenant(sql);
  const other = await insertTenant(sql);
  const send = await sendOf(tenant, 'gone@example.org');
  const at = new Date();
  await sql.begin((tx) =>
    recordBounce(tx, createLogger('silent'), {
      send,
      at,
      subtype: 'hard',
      statusDetail: '550 5.1.1 no such user',
      reply: '550 5.1.1 no such user',
      detail: { source: 'test' },
    }),
  );
  t.match((await sql`select status, status_detail from sends where id = ${send.id}`)[0], { status: 'bounced', status_detail: '550 5.1.1 no such user' });
  t.match((await sql`select type, subtype, detail from events where send_id = ${send.id}`)[0], { type: 'bounce', subtype: 'hard', detail: { source: 'test' } });
  t.equal((await sql`select count(*)::int as n from suppressions where tenant_id = ${tenant} and reason = 'hard_bounce'`)[0]!['n'], 1);
  t.equal((await sql`select count(*)::int as n from suppressions where tenant_id = ${other}`)[0]!['n'], 0, "another tenant's list is untouched");
});

t.test('a soft bounce suppresses nothing; an address the list cannot hold leaves the bounce standing', async (t) => {
  const tenant = await insertTenant(sql);
  const soft = await sendOf(tenant, 'full@example.org');
  await sql.begin((tx) =>
    recordBounce(tx, createLogger('silent'), { send: soft, at: new Date(), subtype: 'soft', statusDetail: 'mailbox full', reply: '452 full', detail: {} }),
  );
  t.equal((await sql`select count(*)::int as n from suppressions where tenant_id = ${tenant}`)[0]!['n'], 0);
  const odd = await sendOf(tenant, 'not an address');
  await sql.begin((tx) => recordBounce(tx, createLogger('silent'), { send: odd, at: new Date(), subtype: 'hard', statusDetail: 'x', reply: 'x', detail: {} }));
  t.equal((await sql`select status from sends where id = ${odd.id}`)[0]!['status'], 'bounced');
});
