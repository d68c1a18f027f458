// The send path's batched look-ups: right answers for many concurrent askers across tenants, one query per tick, and never a stale answer.
import t from 'tap';
import { createSendLookups } from '../../../mta/outbound/lookups.js';
import { buildTestApp } from '../../helpers/app.js';
import { insertDomain, insertTenant } from '../../helpers/tenant-rows.js';

const { sql } = await buildTestApp(t);

t.test('concurrent look-ups are answered from one query each, correctly per tenant', async (t) => {
  const [a, b, none] = [await insertTenant(sql), await insertTenant(sql), await insertTenant(sql)];
  const verifiedA = await insertDomain(sql, a, 'a-mail.example');
  await insertDomain(sql, a, 'a-pending.example');
  const verifiedB = await insertDomain(sql, b, 'b-mail.example');
  await sql`update domains set verified_at = now() where id in (${verifiedA}, ${verifiedB})`;
  await sql`insert into suppressions (tenant_id, email, reason, source, created_at) values (${a}, 'gone@x.example', 'manual', 'api', now())`;

  let queries = 0;
  const counted = new Proxy(sql, {
    apply(target, self, args) {
      queries++;
      return Reflect.apply(target as never, self, args);
    },
  });
  const lookups = createSendLookups(counted);
  const [suppressed, domains] = await Promise.all([
    Promise.all([
      lookups.isSuppressed(a, 'gone@x.example'),
      lookups.isSuppressed(b, 'gone@x.example'),
      lookups.isSuppressed(a, 'here@x.example'),
      ...Array.from({ length: 20 }, (_, i) => lookups.isSuppressed(a, `n${i}@x.example`)),
    ]),
    Promise.all([lookups.sendingDomains(a), lookups.sendingDomains(b), lookups.sendingDomains(none), lookups.sendingDomains(a)]),
  ]);
  t.same(suppressed.slice(0, 3), [true, false, false], "a suppression belongs to its tenant only");
  t.ok(suppressed.slice(3).every((s) => s === false));
  t.same(domains.map((d) => d.map((x) => x.name)), [['a-mail.example'], ['b-mail.example'], [], ['a-mail.example']]);
  t.equal(queries, 2, 'one query per kind of look-up for 27 askers');

  await sql`delete from suppressions where tenant_id = ${a}`;
  t.equal(await lookups.isSuppressed(a, 'gone@x.example'), false, 'answers are never cached');
});
