// Migration 111 on a database whose rollups were computed before deferrals were counted per domain: the hours of the
// last 30 days that hold a deferral are marked for the worker, which then counts them; older hours are left alone.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { refreshStaleHours } from '../../../../shared/engagement/analytics/queries.js';
import { databaseBefore } from '../../../helpers/migration-db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const DEFERRED = 111;
const HOUR = 3_600_000;

const { sql, apply } = await databaseBefore(t, DEFERRED);

t.test('recent hours with a deferral are recomputed with it; older ones are not touched', async (t) => {
  const tenant = await insertTenant(sql);
  const event = async (type: string, recipient: string, ageMs: number) => sql`
    insert into events (id, tenant_id, type, recipient, detail, occurred_at)
    values (${randomUUID()}, ${tenant}, ${type}, ${recipient}, '{}', ${new Date(Date.now() - ageMs)})`;
  await event('send', 'ann@gmail.com', 2 * HOUR);
  await event('deferred', 'ann@gmail.com', 2 * HOUR);
  await event('delivered', 'bob@outlook.com', 3 * HOUR);
  await event('deferred', 'old@yahoo.com', 40 * 24 * HOUR);
  // The worker has rolled every hour up, as it did before: no deferral counted (the code of today cannot write the
  // old shape, so its rows are written here).
  await sql`delete from analytics_stale_hours`;
  await sql`
    insert into analytics_domain_hourly (tenant_id, hour, domain, sent, delivered)
    values (${tenant}, date_trunc('hour', now() - interval '2 hours', 'UTC'), 'gmail.com', 1, 0),
      (${tenant}, date_trunc('hour', now() - interval '3 hours', 'UTC'), 'outlook.com', 0, 1)`;

  t.same(await apply(), [DEFERRED]);
  const [marked] = await sql<{ n: number }[]>`select count(distinct hour)::int as n from analytics_stale_hours where tenant_id = ${tenant}`;
  t.equal(marked!.n, 1, 'only the recent hour holding a deferral is marked');
  while ((await refreshStaleHours(sql, 100)) > 0);
  const rows = await sql<{ domain: string; sent: number; delivered: number; deferred: number }[]>`
    select domain, sent::int, delivered::int, deferred::int from analytics_domain_hourly where tenant_id = ${tenant} order by domain`;
  t.same(
    rows.map((r) => [r.domain, r.sent, r.delivered, r.deferred]),
    [
      ['gmail.com', 1, 0, 1],
      ['outlook.com', 0, 1, 0],
    ],
    'the recomputed hour counts its deferral; the 40-day-old one stays as it was rolled up (with no yahoo.com row)',
  );
});
