// Monthly quota on a real database: exact under concurrency, per UTC month, plan caps.
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { consumeMonthlyMany, monthlyUsage, releaseQuota } from '../../../../shared/limits/quota/usage.js';
import type { Queryable } from '../../../../shared/db/connection.js';
import { utcMonth } from '../../../../shared/deliverability/warmup/tiers.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

/** One send counted in its own statement: the unbatched case of consumeMonthlyMany. */
async function consumeMonthly(db: Queryable, tenantId: string, at: Date): Promise<{ used: number | undefined; cap: number }> {
  const [taken] = await consumeMonthlyMany(db, [{ tenantId, month: utcMonth(at), want: 1 }]);
  return { used: taken!.used, cap: taken!.cap };
}

t.test('consumeMonthlyMany, one send per statement, counts exactly up to the plan cap under concurrency, per month', async (t) => {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 20 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  await sql`insert into plans (id, name, monthly_send_cap) values ('fifty', 'Fifty', 50), ('none', 'None', 0)`;
  const tenantId = await insertTenant(sql, 'fifty');
  const at = new Date('2026-11-21T10:00:00Z');
  const results = await Promise.all(Array.from({ length: 120 }, () => consumeMonthly(sql, tenantId, at)));
  t.equal(results.filter((r) => r.used !== undefined).length, 50);
  t.ok(results.every((r) => r.cap === 50));
  t.same(await monthlyUsage(sql, tenantId, at), { used: 50, cap: 50 });
  t.same(await consumeMonthly(sql, tenantId, new Date('2026-12-01T00:00:00Z')), { used: 1, cap: 50 }, 'a new month starts at zero');
  await releaseQuota(sql, tenantId, at);
  t.equal((await monthlyUsage(sql, tenantId, at)).used, 49);
  await sql`update tenants set plan_id = 'none' where id = ${tenantId}`;
  t.same(await consumeMonthly(sql, tenantId, at), { used: undefined, cap: 0 }, 'a zero cap admits nothing');
  await sql`update tenants set plan_id = 'pro' where id = ${tenantId}`;
  t.same(await consumeMonthly(sql, tenantId, at), { used: 50, cap: 250000 }, 'the cap follows the plan; usage is not reset');
});
