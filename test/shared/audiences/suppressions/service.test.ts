// The calls the mail pipeline makes: isSuppressed (case-insensitive, tenant-scoped) and suppress (an upsert keeping the first row).
import t from 'tap';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { isSuppressed, normalizeEmail, suppress } from '../../../../shared/audiences/suppressions/service.js';
import { insertTenant } from '../../../../shared/accounts/tenants/queries.js';
import type { TestLike } from '../../../helpers/app.js';
import { createTestDatabase } from '../../../helpers/db.js';

const AT = new Date('2030-05-06T07:08:09.000Z');
const LATER = new Date('2030-05-07T00:00:00.000Z');
const MESSAGE = '5f0c8a4e-1d2b-4c3a-9e8f-7a6b5c4d3e2f';

async function setup(t: TestLike): Promise<{ sql: Sql; a: string; b: string }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const a = await insertTenant(sql, { name: 'A', slug: 'tenant-a' });
  const b = await insertTenant(sql, { name: 'B', slug: 'tenant-b' });
  return { sql, a: a.id, b: b.id };
}

t.test('normalizeEmail: trimmed, lower-cased, IDNA domain; strict about everything else', async (t) => {
  t.equal(normalizeEmail('  Jane.Doe+Tag@Example.COM\t'), 'jane.doe+tag@example.com');
  t.equal(normalizeEmail('user@Bücher.Example'), 'user@xn--bcher-kva.example');
  for (const bad of [
    'x',
    'a@b',
    'a@b.c@d.e',
    'a b@example.com',
    'a@example.com\r\nBcc: b@example.com',
    'a@example.com\n',
    '"a"@example.com',
    'a@[127.0.0.1]',
  ]) {
    t.throws(() => normalizeEmail(bad), { slug: 'validation_error', message: /^email\b/ }, JSON.stringify(bad).replace(/[^\x20-\x7e]/g, '?'));
  }
  t.throws(() => normalizeEmail('nope', 'emails.7'), { message: /^emails\.7: / }, 'names the field given');
});

t.test('suppress adds once and keeps the first row; isSuppressed is case-insensitive', async (t) => {
  const { sql, a } = await setup(t);
  t.equal(await isSuppressed(sql, a, 'bounced@example.com'), false, 'not yet');
  t.equal(
    await suppress(sql, a, {
      email: 'Bounced@Example.com',
      reason: 'hard_bounce',
      source: 'bounce',
      detail: '550 5.1.1 <bounced@example.com>: user unknown',
      messageId: MESSAGE,
      at: AT,
    }),
    true,
    'new',
  );
  t.equal(await suppress(sql, a, { email: ' BOUNCED@example.COM ', reason: 'complaint', source: 'complaint', at: LATER }), false, 'already there');
  t.equal(await suppress(sql, a, { email: 'bounced@example.com', reason: 'unsubscribe', source: 'unsubscribe-link', at: LATER }), false);

  const rows = await sql<{ email: string; reason: string; source: string; detail: string; message_id: string; created_at: Date }[]>`
    select email, reason, source, detail, message_id, created_at from suppressions where tenant_id = ${a}`;
  t.equal(rows.length, 1, 'one row per address');
  t.same(
    rows[0],
    {
      email: 'bounced@example.com',
      reason: 'hard_bounce',
      source: 'bounce',
      detail: '550 5.1.1 <bounced@example.com>: user unknown',
      message_id: MESSAGE,
      created_at: AT,
    },
    'the first row is kept as it was',
  );

  for (const probe of ['bounced@example.com', 'BOUNCED@EXAMPLE.COM', '  Bounced@example.com ']) {
    t.equal(await isSuppressed(sql, a, probe), true, `isSuppressed(${JSON.stringify(probe)})`);
  }
  t.equal(await isSuppressed(sql, a, 'bounced2@example.com'), false, 'another address');
  t.equal(await isSuppressed(sql, a, 'bounced@example.com\r\nBcc: x@example.com'), false, 'an invalid address is never on the list');
  t.equal(await isSuppressed(sql, a, ''), false);

  t.equal(await suppress(sql, a, { email: 'idn@Bücher.example', reason: 'complaint', source: 'complaint', at: AT }), true);
  t.equal(await isSuppressed(sql, a, 'IDN@xn--bcher-kva.example'), true, 'the Unicode and ASCII forms of a domain are one address');
  t.equal(await isSuppressed(sql, a, 'idn@bücher.example'), true);
});

t.test('the list is per tenant', async (t) => {
  const { sql, a, b } = await setup(t);
  t.equal(await suppress(sql, a, { email: 'shared@example.com', reason: 'complaint', source: 'complaint', at: AT }), true);
  t.equal(await isSuppressed(sql, a, 'shared@example.com'), true);
  t.equal(await isSuppressed(sql, b, 'shared@example.com'), false, 'another tenant still sends to it');
  t.equal(await suppress(sql, b, { email: 'SHARED@example.com', reason: 'unsubscribe', source: 'unsubscribe-link', at: LATER }), true, 'new for tenant b');
  const rows = await sql<{ tenant_id: string; reason: string }[]>`select tenant_id, reason from suppressions order by created_at`;
  t.same(
    rows.map((r) => [r.tenant_id, r.reason]),
    [
      [a, 'complaint'],
      [b, 'unsubscribe'],
    ],
  );
});

t.test("suppress works inside the caller's transaction and refuses invalid addresses", async (t) => {
  const { sql, a } = await setup(t);
  await t.rejects(
    sql.begin(async (tx) => {
      t.equal(await suppress(tx, a, { email: 'rolled@example.com', reason: 'hard_bounce', source: 'bounce', at: AT }), true);
      throw new Error('the caller fails later');
    }),
    /the caller fails later/,
  );
  t.equal(await isSuppressed(sql, a, 'rolled@example.com'), false, 'rolled back with the caller');
  await t.rejects(suppress(sql, a, { email: 'not an address', reason: 'hard_bounce', source: 'bounce', at: AT }), {
    slug: 'validation_error',
    message: /^email: /,
  });
  await t.rejects(suppress(sql, a, { email: 'x@example.com\nBcc: y@example.com', reason: 'complaint', source: 'complaint', at: AT }), {
    slug: 'validation_error',
    message: /^email: must not contain line breaks/,
  });
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from suppressions`;
  t.equal(row!.n, 0);
});

t.test('many concurrent suppress calls for one address make one row, and exactly one reports it new', async (t) => {
  const { sql, a } = await setup(t);
  const outcomes = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      suppress(sql, a, { email: `Race@example.com`, reason: i % 2 ? 'complaint' : 'hard_bounce', source: 'bounce', at: AT }),
    ),
  );
  t.equal(outcomes.filter(Boolean).length, 1);
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from suppressions where tenant_id = ${a}`;
  t.equal(row!.n, 1);
});

t.test("an erased person's hash-only entry: isSuppressed matches the address, suppress adds nothing, an unsubscribed contact counts too", async (t) => {
  const { sql, a, b } = await setup(t);
  await sql`insert into suppressions (tenant_id, email, email_hash, reason, source, created_at)
            values (${a}, null, sha256(convert_to('gone@example.com', 'UTF8')), 'erased', 'erasure', ${AT})`;
  t.equal(await isSuppressed(sql, a, ' Gone@Example.com'), true);
  t.equal(await isSuppressed(sql, b, 'gone@example.com'), false, 'per tenant');
  t.equal(await suppress(sql, a, { email: 'gone@example.com', reason: 'hard_bounce', source: 'bounce', at: LATER }), false, 'already suppressed by hash');
  const rows = await sql<{ email: string | null; reason: string }[]>`select email, reason from suppressions where tenant_id = ${a}`;
  t.same(rows, [{ email: null, reason: 'erased' }], 'the hash-only row is left as it was');
  await sql`insert into contacts (tenant_id, email, status, created_at, updated_at) values (${a}, 'quiet@example.com', 'unsubscribed', ${AT}, ${AT})`;
  t.equal(await isSuppressed(sql, a, 'QUIET@example.com'), true, 'an unsubscribed contact is not mailed');
});
