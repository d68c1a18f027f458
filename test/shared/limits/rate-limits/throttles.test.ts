// The refusal log behind GET /admin/ratelimits: counts per tenant and minute kept in memory, written by one statement per flush, added up across flushes and
// processes.
import t from 'tap';
import { ThrottleLog } from '../../../../shared/limits/rate-limits/throttles.js';
import { buildTestApp, registerTenant } from '../../../helpers/app.js';

t.test('refusals are counted per tenant and minute and added up across flushes and logs', async (t) => {
  const s = await buildTestApp(t);
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  const log = new ThrottleLog();
  log.record(a.tenantId, minute + 1_000);
  log.record(a.tenantId, minute + 5_000);
  log.record(b.tenantId, minute + 2_000);
  log.record(a.tenantId, minute + 61_000); // the next minute
  await log.flush(s.sql);
  await log.flush(s.sql); // nothing new: writes nothing
  const other = new ThrottleLog(); // another process
  other.record(a.tenantId, minute + 62_000);
  await other.flush(s.sql);

  const rows = await s.sql<{ tenant_id: string; minute_start: Date; count: number; last_at: Date }[]>`
    select tenant_id, minute_start, count, last_at from rate_limit_throttles order by tenant_id = ${a.tenantId} desc, minute_start`;
  t.same(
    rows.map((r) => [r.tenant_id, r.minute_start.getTime() - minute, r.count, r.last_at.getTime() - minute]),
    [
      [a.tenantId, 0, 2, 5_000],
      [a.tenantId, 60_000, 2, 62_000],
      [b.tenantId, 0, 1, 2_000],
    ],
  );

  // A tenant deleted before the flush: its refusals are dropped, the others written.
  log.record(b.tenantId, minute + 63_000);
  log.record(a.tenantId, minute + 63_000);
  await s.sql`delete from tenants where id = ${b.tenantId}`;
  await log.flush(s.sql);
  const [row] = await s.sql<
    { count: number }[]
  >`select count from rate_limit_throttles where tenant_id = ${a.tenantId} and minute_start = ${new Date(minute + 60_000)}`;
  t.equal(row!.count, 3);
});
