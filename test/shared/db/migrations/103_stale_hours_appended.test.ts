// Stale-hour marks (migration 103): every events statement appends its hours without locking another writer's; the rollup worker claims an hour's marks
// together, and a mark committed after its claim stays for the next one.
import postgres from 'postgres';
import t from 'tap';
import { countStaleHours, refreshStaleHours } from '../../../../shared/engagement/analytics/queries.js';
import { insertEvents, type NewEvent } from '../../../../shared/engagement/events/queries.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 3, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});
const tenantId = await insertTenant(sql);
const send = (at: string): NewEvent => ({
  tenant_id: tenantId,
  type: 'send',
  subtype: null,
  send_id: null,
  message_id: null,
  recipient: 'r@dest.example',
  detail: {},
  occurred_at: new Date(at),
});
const sentAt = async (hour: string) => {
  const [row] = await sql<{ sent: number }[]>`select sent::int from analytics_hourly where tenant_id = ${tenantId} and hour = ${hour}`;
  return row?.sent ?? 0;
};

t.test('marks of one hour from several statements are one stale hour, claimed and recomputed once', async (t) => {
  await insertEvents(sql, [send('2026-05-04T10:05:00Z')]);
  await insertEvents(sql, [send('2026-05-04T10:45:00Z'), send('2026-05-04T11:00:00Z')]);
  t.equal((await sql`select count(*)::int as n from analytics_stale_hours`)[0]!['n'], 3, 'one mark per statement and hour');
  t.equal(await countStaleHours(sql), 2);
  t.equal(await refreshStaleHours(sql, 100), 2);
  t.equal(await countStaleHours(sql), 0);
  t.equal(await sentAt('2026-05-04T10:00:00Z'), 2);
  t.equal(await sentAt('2026-05-04T11:00:00Z'), 1);
});

t.test('a writer still open while the worker claims its hour: its mark outlives the claim, and the next claim counts its event', async (t) => {
  const writer = await sql.reserve();
  try {
    await writer`begin`;
    await insertEvents(writer, [send('2026-05-04T10:30:00Z')]);
    // Another writer's committed event of the same hour: the worker claims the hour now, without waiting for the open writer.
    await insertEvents(sql, [send('2026-05-04T10:31:00Z')]);
    t.equal(await refreshStaleHours(sql, 100), 1);
    t.equal(await sentAt('2026-05-04T10:00:00Z'), 3, 'the committed event counted, the open one not yet');
    await writer`commit`;
  } finally {
    writer.release();
  }
  t.equal(await countStaleHours(sql), 1, "the late writer's mark is still there");
  t.equal(await refreshStaleHours(sql, 100), 1);
  t.equal(await sentAt('2026-05-04T10:00:00Z'), 4);
});
