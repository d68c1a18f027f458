// The send writer: a message's sends, events and delivery-queue rows commit together; a message stored already (a lost COMMIT reply) is answered, not
// written twice.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import type { PendingSend } from '../../../shared/sending/send-writer.js';
import { buildTestApp, countRows } from '../../helpers/app.js';
import { insertTenant } from '../../helpers/tenant-rows.js';

const { ctx, sql } = await buildTestApp(t);
const writer = ctx.writer;
const tenantId = await insertTenant(sql);

function pending(to: string): PendingSend {
  const id = randomUUID();
  const at = new Date();
  return {
    send: {
      id,
      tenant_id: tenantId,
      domain_id: null,
      api_key_id: null,
      source: 'smtp',
      mode: 'live',
      status: 'queued',
      from_email: 'a@w.example',
      to_email: to,
      subject: 's',
      message_id: `${id}@mx.test`,
      envelope_from: 'b@mx.test',
      gate_decisions: [],
      message: Buffer.from('m'),
      defer_until: null,
      status_detail: null,
      campaign_id: null,
      campaign_variant: null,
      contact_id: null,
      created_at: at,
    },
    events: [{ tenant_id: tenantId, type: 'send', subtype: null, send_id: id, message_id: `${id}@mx.test`, recipient: to, detail: {}, occurred_at: at }],
    delivery: { startAfter: null, tenant: { status: 'active', is_sandbox: false } },
  };
}

const jobsOf = async (ids: string[]) => (await sql<{ n: number }[]>`select count(*)::int as n from delivery_queue where send_id = any(${ids}::uuid[])`)[0]!.n;

t.test("one message's recipients commit together, with their events and delivery-queue rows", async (t) => {
  const message = [pending('x@d.example'), pending('y@d.example')];
  const rows = await writer.write(message);
  t.same(
    rows.map((r) => r.id),
    message.map((p) => p.send.id),
    'one stored send each, in order',
  );
  t.equal(await jobsOf(message.map((p) => p.send.id)), 2);
});

t.test('a message written again (as after a lost COMMIT reply) is answered from the stored rows, nothing doubled', async (t) => {
  const message = [pending('z@d.example')];
  const [first, again, other] = await Promise.all([writer.write(message), writer.write(message), writer.write([pending('w@d.example')])]);
  t.equal(again[0]!.id, first[0]!.id);
  t.equal(other[0]!.status, 'queued', 'the other message of the failed batch is stored too');
  t.equal(await jobsOf([message[0]!.send.id]), 1, 'one queue row');
  t.equal((await sql<{ n: number }[]>`select count(*)::int as n from events where send_id = ${message[0]!.send.id}`)[0]!.n, 1, 'one event');
  t.equal(await countRows(sql, 'sends', tenantId), 4);
});
