// The audit hash chain: canonical hashing, unlocked writes chained by the appender, tamper detection (the first broken link named), late commits and
// concurrent writers.
import t from 'tap';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { auditHash, canonicalJson, contentJson, GENESIS_HASH, type AuditContent } from '../../../../shared/operations/audit/chain.js';
import { chainBatch, chainPending } from '../../../../shared/operations/audit/appender.js';
import { writeAudit, type AuditEvent } from '../../../../shared/operations/audit/log.js';
import { verifyAuditChain, type ChainReport } from '../../../../shared/operations/audit/verify.js';
import { createTestDatabase } from '../../../helpers/db.js';
import type { TestLike } from '../../../helpers/app.js';

async function freshDb(t: TestLike): Promise<Sql> {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 6 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  return sql;
}

const intact = (rows: number): ChainReport => ({ intact: true, rows, brokenAt: null, brokenSeq: null, reason: null });

const TENANT = '11111111-1111-4111-8111-111111111111';

function event(i: number, extra: Partial<AuditEvent> = {}): AuditEvent {
  return {
    tenantId: TENANT,
    actor: { type: 'user', id: `user-${i}`, ip: '127.0.0.1' },
    action: 'test.event',
    resourceType: 'thing',
    resourceId: `thing-${i}`,
    metadata: { i, nested: { b: 2, a: [1, { y: 'é', x: null }] } },
    at: new Date(Date.UTC(2030, 0, 1, 0, 0, 0, i)),
    ...extra,
  };
}

const content: AuditContent = {
  tenant_id: TENANT,
  actor_type: 'user',
  actor_id: 'u1',
  action: 'api_key.created',
  resource_type: 'api_key',
  resource_id: 'k1',
  metadata: { b: 1, a: { d: [3, 2], c: 'x' } },
  ip: '10.0.0.1',
  created_at: new Date('2030-01-01T00:00:00.123Z'),
};

t.test('canonical JSON sorts keys at every depth and keeps array order', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [3, 2], c: 'x' } }), '{"a":{"c":"x","d":[3,2]},"b":1}');
  t.equal(canonicalJson({ a: 1, b: 2 }), canonicalJson({ b: 2, a: 1 }));
  t.equal(canonicalJson({ a: undefined, b: null }), '{"b":null}', 'undefined members are left out, as JSON does');
  t.equal(canonicalJson(new Date('2030-01-01T00:00:00Z')), '"2030-01-01T00:00:00.000Z"');
  t.equal(canonicalJson('say "hi"'), '"say \\"hi\\""');
  const iso = { ...content, created_at: content.created_at.toISOString() };
  t.equal(contentJson(iso), canonicalJson(iso), "the verifier's fixed-order serializer writes what canonicalJson writes");
  t.equal(contentJson({ ...iso, ip: undefined as unknown as null }), canonicalJson({ ...iso, ip: undefined }), 'and leaves out an undefined member as it does');
});

t.test('the hash covers every field and the previous hash', async (t) => {
  const base = auditHash(content, GENESIS_HASH);
  t.match(base, /^[0-9a-f]{64}$/);
  t.equal(auditHash({ ...content, metadata: { a: { c: 'x', d: [3, 2] }, b: 1 } }, GENESIS_HASH), base, 'key order does not matter');
  const changes: Partial<AuditContent>[] = [
    { tenant_id: null },
    { actor_type: 'system' },
    { actor_id: 'u2' },
    { action: 'api_key.revoked' },
    { resource_type: 'user' },
    { resource_id: 'k2' },
    { metadata: { b: 2, a: { d: [3, 2], c: 'x' } } },
    { metadata: { b: 1, a: { d: [2, 3], c: 'x' } } },
    { ip: null },
    { created_at: new Date('2030-01-01T00:00:00.124Z') },
  ];
  for (const change of changes) t.not(auditHash({ ...content, ...change }, GENESIS_HASH), base, `changing ${Object.keys(change)[0]} changes the hash`);
  t.not(auditHash(content, 'f'.repeat(64)), base, 'a different predecessor changes the hash');
});

t.test('written rows chain from the genesis hash and verify as intact', async (t) => {
  const sql = await freshDb(t);
  const empty = await verifyAuditChain(sql);
  t.same(empty, intact(0), 'an empty log is intact');

  for (let i = 0; i < 10; i++) await writeAudit(sql, event(i));
  // Also through a caller's transaction, as the services do.
  await sql.begin((tx) => writeAudit(tx, event(10, { actor: { type: 'system', id: null } })));

  t.equal((await sql`select 1 from audit_events where chain_seq is null`).length, 11, 'written unchained');
  t.same(await verifyAuditChain(sql), intact(0), 'the chain covers chained rows only');
  t.equal(await chainPending(sql), 11);
  const rows = await sql<{ id: string; prev_hash: string; hash: string }[]>`select id, prev_hash, hash from audit_events order by chain_seq`;
  t.equal(rows.length, 11);
  t.equal(rows[0]!.prev_hash, GENESIS_HASH, 'the first row chains to the genesis hash');
  for (let i = 1; i < rows.length; i++) t.equal(rows[i]!.prev_hash, rows[i - 1]!.hash, `row ${i} chains to row ${i - 1}`);
  t.same(await verifyAuditChain(sql), intact(11));
  t.same(await verifyAuditChain(sql, 3), intact(11), 'verification pages through the log');
});

t.test('a rolled-back change leaves no audit row and the chain intact', async (t) => {
  const sql = await freshDb(t);
  await writeAudit(sql, event(0));
  await t.rejects(
    sql.begin(async (tx) => {
      await writeAudit(tx, event(1));
      throw new Error('the audited change failed');
    }),
  );
  await writeAudit(sql, event(2));
  await chainPending(sql);
  t.same(await verifyAuditChain(sql), intact(2));
});

t.test('tampering is detected at the changed row', async (t) => {
  const tampers: [string, (sql: Sql, id: string) => Promise<unknown>][] = [
    ['metadata', (sql, id) => sql`update audit_events set metadata = jsonb_set(metadata, '{i}', '999') where id = ${id}`],
    ['action', (sql, id) => sql`update audit_events set action = 'test.other' where id = ${id}`],
    ['actor', (sql, id) => sql`update audit_events set actor_id = 'someone-else' where id = ${id}`],
    ['tenant', (sql, id) => sql`update audit_events set tenant_id = null where id = ${id}`],
    ['time', (sql, id) => sql`update audit_events set created_at = created_at + interval '1 second' where id = ${id}`],
    ['hash recomputed without predecessor fix', (sql, id) => sql`update audit_events set hash = repeat('a', 64) where id = ${id}`],
  ];
  for (const [what, tamper] of tampers) {
    await t.test(what, async (t) => {
      const sql = await freshDb(t);
      for (let i = 0; i < 5; i++) await writeAudit(sql, event(i));
      await chainPending(sql);
      const ids = (await sql<{ id: string }[]>`select id from audit_events order by id`).map((r) => r.id);
      await tamper(sql, ids[2]!);
      const result = await verifyAuditChain(sql);
      t.equal(result.intact, false);
      t.equal(result.brokenAt, ids[2], 'the changed row is named');
      t.equal(result.rows, 2, 'rows before it verified');
    });
  }
});

t.test('deleting a middle row is detected at the row after it', async (t) => {
  const sql = await freshDb(t);
  for (let i = 0; i < 5; i++) await writeAudit(sql, event(i));
  await chainPending(sql);
  const ids = (await sql<{ id: string }[]>`select id from audit_events order by id`).map((r) => r.id);
  await sql`delete from audit_events where id = ${ids[2]!}`;
  const result = await verifyAuditChain(sql);
  t.equal(result.intact, false);
  t.equal(result.brokenAt, ids[3]);
});

t.test('deleting the first row is detected', async (t) => {
  const sql = await freshDb(t);
  for (let i = 0; i < 3; i++) await writeAudit(sql, event(i));
  await chainPending(sql);
  const ids = (await sql<{ id: string }[]>`select id from audit_events order by id`).map((r) => r.id);
  await sql`delete from audit_events where id = ${ids[0]!}`;
  t.match(await verifyAuditChain(sql), { intact: false, rows: 0, brokenAt: ids[1], brokenSeq: '2', reason: /position 1 is missing/ });
});

t.test('concurrent writers still build one unbroken chain', async (t) => {
  const sql = await freshDb(t);
  await Promise.all(Array.from({ length: 40 }, (_, i) => writeAudit(sql, event(i))));
  await Promise.all(Array.from({ length: 20 }, (_, i) => sql.begin((tx) => writeAudit(tx, event(100 + i)))));
  t.equal(await chainPending(sql, 100, 7), 60, 'chained in batches of 7');
  const rows = await sql<{ prev_hash: string }[]>`select prev_hash from audit_events`;
  t.equal(new Set(rows.map((r) => r.prev_hash)).size, 60, 'no two rows chain to the same predecessor');
  t.same(await verifyAuditChain(sql), intact(60));
});

t.test('a row that commits after later ids were chained joins the chain after them, and the chain stays intact', async (t) => {
  const sql = await freshDb(t);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let written!: () => void;
  const insertDone = new Promise<void>((r) => (written = r));
  // The slow transaction takes its id first, then commits last.
  const slow = sql.begin(async (tx) => {
    await writeAudit(tx, event(0, { action: 'test.slow' }));
    written();
    await held;
  });
  await insertDone;
  for (let i = 1; i <= 3; i++) await writeAudit(sql, event(i));
  t.equal(await chainBatch(sql), 3, 'only committed rows are chained');
  release();
  await slow;
  t.equal(await chainBatch(sql), 1);
  const order = await sql<{ action: string; chain_seq: string }[]>`select action, chain_seq from audit_events order by chain_seq`;
  t.same(
    order.map((r) => r.action),
    ['test.event', 'test.event', 'test.event', 'test.slow'],
    'the late row is chained last',
  );
  t.same(await verifyAuditChain(sql), intact(4));
});

t.test('two appenders at once never chain a row twice', async (t) => {
  const sql = await freshDb(t);
  await Promise.all(Array.from({ length: 30 }, (_, i) => writeAudit(sql, event(i))));
  await Promise.all([chainPending(sql, 100, 4), chainPending(sql, 100, 4), chainPending(sql, 100, 4)]);
  await chainPending(sql);
  t.same(await verifyAuditChain(sql), intact(30));
});
