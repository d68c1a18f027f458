// Outbound log SQL on a real database: insert and read sends, filters and keyset pages, attempts, Idempotency-Key answers.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import {
  answerIdempotencyKey,
  claimIdempotencyKey,
  countSends,
  findSend,
  insertAttempt,
  insertSends,
  listAttempts,
  listSends,
  purgeIdempotencyKeys,
  releaseIdempotencyKey,
  type NewSend,
} from '../../../../shared/sending/outbound-log/queries.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  return { sql, tenantId: await insertTenant(sql), otherTenant: await insertTenant(sql) };
}

const send = (tenantId: string, over: Partial<NewSend> = {}): NewSend => ({
  id: randomUUID(),
  tenant_id: tenantId,
  domain_id: null,
  api_key_id: null,
  source: 'api',
  mode: 'live',
  status: 'queued',
  from_email: 'hello@send.example',
  to_email: 'rcpt@example.org',
  subject: 'Hi',
  message_id: `${randomUUID()}@mx.mailpath.test`,
  envelope_from: 'b-x@mx.mailpath.test',
  gate_decisions: [{ gate: 'suspended', outcome: 'continue' }],
  message: Buffer.from('Subject: Hi\r\n\r\nbody\r\n'),
  defer_until: null,
  status_detail: null,
  campaign_id: null,
  campaign_variant: null,
  contact_id: null,
  created_at: new Date('2026-11-21T10:00:00Z'),
  ...over,
});

const insertOne = async (db: Parameters<typeof insertSends>[0], s: NewSend) => {
  await insertSends(db, [s]);
  return (await findSend(db, s.tenant_id, s.id))!;
};

t.test('sends: insert, read within the tenant only, filter and page', async (t) => {
  const { sql, tenantId, otherTenant } = await setup(t);
  const first = await insertOne(sql, send(tenantId));
  t.match(first, { status: 'queued', size_bytes: 21, gate_decisions: [{ gate: 'suspended' }] });
  t.notOk('message' in first, 'the message bytes stay out of reads');
  t.ok(await findSend(sql, tenantId, first.id));
  t.equal(await findSend(sql, otherTenant, first.id), undefined, 'another tenant does not see it');
  await insertOne(sql, send(tenantId, { status: 'dropped', message: null, to_email: 'gone@example.org', created_at: new Date('2026-11-21T11:00:00Z') }));
  await insertOne(sql, send(tenantId, { status: 'simulated', mode: 'test', created_at: new Date('2026-11-21T12:00:00Z') }));
  await insertOne(sql, send(otherTenant));

  t.equal(await countSends(sql, tenantId, {}), 3);
  t.same(
    (await listSends(sql, tenantId, { limit: 10 })).map((s) => s.status),
    ['simulated', 'dropped', 'queued'],
    'newest first',
  );
  t.same(
    (await listSends(sql, tenantId, { limit: 10, status: 'dropped' })).map((s) => s.to_email),
    ['gone@example.org'],
  );
  t.equal((await listSends(sql, tenantId, { limit: 10, recipient: 'rcpt@example.org' })).length, 2);
  t.equal((await listSends(sql, tenantId, { limit: 10, since: new Date('2026-11-21T10:30:00Z') })).length, 2);
  const page = await listSends(sql, tenantId, { limit: 2 });
  const rest = await listSends(sql, tenantId, { limit: 2, after: { at: page[1]!.created_at, id: page[1]!.id } });
  t.same(
    rest.map((s) => s.id),
    [first.id],
  );

  await insertAttempt(sql, {
    send_id: first.id,
    attempted_at: new Date(),
    remote_host: 'mx.example.org',
    outcome: 'deferred',
    smtp_code: 451,
    enhanced_code: '4.7.1',
    reply: '451 4.7.1 try later',
    duration_ms: 12,
  });
  await insertAttempt(sql, {
    send_id: first.id,
    attempted_at: new Date(),
    remote_host: 'mx.example.org',
    outcome: 'delivered',
    smtp_code: 250,
    enhanced_code: '2.0.0',
    reply: '250 2.0.0 ok',
    duration_ms: 9,
  });
  t.same(
    (await listAttempts(sql, first.id)).map((a) => a.outcome),
    ['deferred', 'delivered'],
    'in order',
  );
});

t.test('sends: a batch stores every message byte for byte beside its own row, whatever the batch size, in one statement text', async (t) => {
  const { sql, tenantId } = await setup(t);
  const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 256));
  const batch = [
    send(tenantId, { message: bytes(8326, 1), subject: 'first "quoted", {braced}', to_email: 'a@example.org' }),
    send(tenantId, { message: null, status: 'dropped', status_detail: 'suppressed', to_email: 'b@example.org' }),
    send(tenantId, { message: Buffer.alloc(0), to_email: 'c@example.org' }),
    send(tenantId, { message: bytes(3, 7), defer_until: new Date('2026-11-22T00:00:00Z'), status: 'deferred', to_email: 'd@example.org' }),
    send(tenantId, { message: bytes(70_000, 3), gate_decisions: [{ gate: 'warmup', outcome: 'defer', note: 'a\\b "c" {d}' }], to_email: 'e@example.org' }),
  ];
  // One connection: the statements it has prepared are visible to it.
  const conn = await sql.reserve();
  t.teardown(() => conn.release());
  const stored = await insertSends(conn, batch);
  t.same(new Set(stored.map((r) => r.id)), new Set(batch.map((s) => s.id)), 'every send answered');
  for (const s of batch) {
    const [row] = await conn<
      { message: Buffer | null; size_bytes: number | null; subject: string; status_detail: string | null; defer_until: Date | null; gate_decisions: unknown }[]
    >`
      select message, size_bytes, subject, status_detail, defer_until, gate_decisions from sends where id = ${s.id}`;
    t.same(row!.message === null ? null : Buffer.compare(row!.message, s.message!), s.message === null ? null : 0, `${s.to_email}: the message as given`);
    t.equal(row!.size_bytes, s.message?.length ?? null);
    t.same(
      [row!.subject, row!.status_detail, row!.defer_until?.toISOString() ?? null, row!.gate_decisions],
      [s.subject, s.status_detail, s.defer_until?.toISOString() ?? null, s.gate_decisions],
      `${s.to_email}: its own columns`,
    );
  }
  await insertSends(conn, [send(tenantId)]);
  await insertSends(conn, [send(tenantId), send(tenantId), send(tenantId)]);
  const [prepared] = await conn<
    { n: number }[]
  >`select count(*)::int as n from pg_prepared_statements where ltrim(statement, E' \n') like 'insert into sends %'`;
  t.equal(prepared!.n, 1, 'batches of 5, 1 and 3 sends share one prepared statement (planned once, not per size)');
});

t.test('idempotency keys: claimed once, answered, replayed for 24 h, released on failure, taken over once expired', async (t) => {
  const { sql, tenantId } = await setup(t);
  const at = new Date('2026-11-21T10:00:00Z');
  const dayBefore = (d: Date) => new Date(d.getTime() - 86_400_000);
  const claim = (requestHash: string, when: Date) =>
    claimIdempotencyKey(sql, {
      tenantId,
      key: 'k1',
      requestHash,
      at: when,
      expiredBefore: dayBefore(when),
      abandonedBefore: new Date(when.getTime() - 60_000),
    });
  t.equal(await claim('h1', at), undefined, 'the first request claims the key');
  t.match(await claim('h1', at), { request_hash: 'h1', status: 0 }, 'a concurrent repeat sees it in progress');
  t.match(await claim('h1', new Date(at.getTime() + 59_000)), { status: 0 }, 'still in progress within its lease');
  t.equal(await claim('h1', new Date(at.getTime() + 61_000)), undefined, 'a claim never answered (its request died) is taken over after the lease');
  await answerIdempotencyKey(sql, { tenantId, key: 'k1', status: 202, response: { id: 1 } });
  t.match(await claim('h2', at), { request_hash: 'h1', status: 202, response: { id: 1 } }, 'another body sees the first answer (a conflict)');
  const later = new Date(at.getTime() + 25 * 3_600_000);
  t.equal(await claim('h3', later), undefined, 'an expired key is claimed anew');
  await releaseIdempotencyKey(sql, tenantId, 'k1');
  t.equal(await claim('h4', later), undefined, 'a released claim can be claimed again');
  await answerIdempotencyKey(sql, { tenantId, key: 'k1', status: 202, response: { id: 4 } });
  await releaseIdempotencyKey(sql, tenantId, 'k1');
  t.match(await claim('h5', later), { status: 202 }, 'an answered key is never released');
  t.equal(await purgeIdempotencyKeys(sql, new Date(later.getTime() + 86_400_000 + 1)), 1);
});
