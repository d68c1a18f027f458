// The send path's batched look-ups (group commit): right answers for many concurrent askers across tenants, one query per batch, and never a stale answer.
import t from 'tap';
import { createSendLookups } from '../../../shared/sending/lookups.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp } from '../../helpers/app.js';
import { insertDomain, insertTenant } from '../../helpers/tenant-rows.js';

const { sql } = await buildTestApp(t);

/** The database handle, counting the queries made through it. */
function countingQueries(): { db: typeof sql; queries(): number } {
  let n = 0;
  const db = new Proxy(sql, {
    apply(target, self, args) {
      n++;
      return Reflect.apply(target as never, self, args);
    },
  });
  return { db, queries: () => n };
}

t.test('concurrent look-ups are answered from one query each, correctly per tenant', async (t) => {
  const [a, b, none] = [await insertTenant(sql), await insertTenant(sql), await insertTenant(sql)];
  const verifiedA = await insertDomain(sql, a, 'a-mail.example');
  await insertDomain(sql, a, 'a-pending.example');
  const verifiedB = await insertDomain(sql, b, 'b-mail.example');
  await sql`update domains set owned_at = now(), verified_at = now() where id in (${verifiedA}, ${verifiedB})`;
  await sql`insert into suppressions (tenant_id, email, reason, source, created_at) values (${a}, 'gone@x.example', 'manual', 'api', now())`;

  const { db: counted, queries } = countingQueries();
  const lookups = createSendLookups(counted, createLogger('silent'));
  const [suppressed, domains, added] = await Promise.all([
    Promise.all([
      lookups.isSuppressed(a, 'gone@x.example'),
      lookups.isSuppressed(b, 'gone@x.example'),
      lookups.isSuppressed(a, 'here@x.example'),
      ...Array.from({ length: 20 }, (_, i) => lookups.isSuppressed(a, `n${i}@x.example`)),
    ]),
    Promise.all([lookups.sendingDomains(a), lookups.sendingDomains(b), lookups.sendingDomains(none), lookups.sendingDomains(a)]),
    Promise.all([lookups.tenantDomains(a), lookups.tenantDomains(none)]),
  ]);
  t.same(suppressed.slice(0, 3), [true, false, false], 'a suppression belongs to its tenant only');
  t.ok(suppressed.slice(3).every((s) => s === false));
  t.same(
    domains.map((d) => d.map((x) => x.name)),
    [['a-mail.example'], ['b-mail.example'], [], ['a-mail.example']],
  );
  t.same(
    added.map((d) => d.map((x) => [x.name, x.canSend]).sort()),
    [
      [
        ['a-mail.example', true],
        ['a-pending.example', false],
      ],
      [],
    ],
    'every added domain, with whether it may send (test keys may use any)',
  );
  t.equal(queries(), 2, 'one query per kind of look-up for 29 askers (sending and added domains share one)');

  await sql`delete from suppressions where tenant_id = ${a}`;
  t.equal(await lookups.isSuppressed(a, 'gone@x.example'), false, 'answers are never cached');
});

t.test('suppression look-ups match by hash (an erased hash-only entry) and refuse unsubscribed contacts, still one query', async (t) => {
  const [a, b] = [await insertTenant(sql), await insertTenant(sql)];
  await sql`insert into suppressions (tenant_id, email, email_hash, reason, source, created_at)
            values (${a}, null, sha256(convert_to('erased@x.example', 'UTF8')), 'erased', 'erasure', now())`;
  await sql`insert into contacts (tenant_id, email, status, created_at, updated_at) values
            (${a}, 'unsub@x.example', 'unsubscribed', now(), now()), (${a}, 'active@x.example', 'active', now(), now()),
            (${a}, 'deleted@x.example', 'deleted', now(), now()), (${b}, 'theirs@x.example', 'unsubscribed', now(), now())`;
  const { db: counted, queries } = countingQueries();
  const lookups = createSendLookups(counted, createLogger('silent'));
  const answers = await Promise.all([
    lookups.isSuppressed(a, 'erased@x.example'),
    lookups.isSuppressed(b, 'erased@x.example'),
    lookups.isSuppressed(a, 'unsub@x.example'),
    lookups.isSuppressed(a, 'active@x.example'),
    lookups.isSuppressed(a, 'deleted@x.example'),
    lookups.isSuppressed(a, 'theirs@x.example'),
    lookups.isSuppressed(b, 'theirs@x.example'),
  ]);
  t.same(answers, [true, false, true, false, false, false, true]);
  t.equal(queries(), 1, 'one query for suppressions and contacts together');
});

t.test('quota usage: one query for concurrent askers, per tenant and per month of the asking time', async (t) => {
  await sql`insert into plans (id, name, monthly_send_cap) values ('lookup-cap', 'Lookup', 70) on conflict do nothing`;
  const [a, b] = [await insertTenant(sql, 'lookup-cap'), await insertTenant(sql, 'lookup-cap')];
  await sql`insert into tenant_monthly_usage (tenant_id, month, sent) values (${a}, '2026-11-01', 12), (${a}, '2026-12-01', 3)`;
  const { db: counted, queries } = countingQueries();
  const lookups = createSendLookups(counted, createLogger('silent'));
  const nov = new Date('2026-11-21T10:00:00Z');
  const usages = await Promise.all([
    lookups.monthlyUsage(a, nov),
    lookups.monthlyUsage(b, nov),
    lookups.monthlyUsage(a, nov),
    lookups.monthlyUsage(a, new Date('2026-12-01T00:00:00Z')),
  ]);
  t.same(usages, [
    { used: 12, cap: 70 },
    { used: 0, cap: 70 },
    { used: 12, cap: 70 },
    { used: 3, cap: 70 },
  ]);
  t.equal(queries(), 2, 'one query per month asked about');
});
