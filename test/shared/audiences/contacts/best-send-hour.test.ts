// best_send_hour: the UTC hour of most opens in 90 days per contact, ties to the earlier hour, machine opens and old opens left out, per tenant.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import t from 'tap';
import { refreshBestSendHours } from '../../../../shared/audiences/contacts/best-send-hour.js';
import type { Sql } from '../../../../shared/db/connection.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 2, onnotice: () => {} }) as unknown as Sql;
t.teardown(async () => {
  await sql.end();
  await db.drop();
});

const NOW = new Date('2026-06-15T12:00:00Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000);

async function contact(tenantId: string, email: string): Promise<string> {
  const [row] = await sql<
    { id: string }[]
  >`insert into contacts (tenant_id, email, created_at, updated_at) values (${tenantId}, ${email}, ${NOW}, ${NOW}) returning id`;
  return row!.id;
}

async function open(tenantId: string, recipient: string, at: Date, detail: Record<string, unknown> = {}): Promise<void> {
  await sql`insert into events (id, tenant_id, type, recipient, detail, occurred_at)
            values (${randomUUID()}, ${tenantId}, 'open', ${recipient}, ${sql.json(detail as postgres.JSONValue)}, ${at})`;
}

const hourOf = async (id: string) => (await sql<{ best_send_hour: number | null }[]>`select best_send_hour from contacts where id = ${id}`)[0]!.best_send_hour;

t.test('the hour with most opens wins; ties go to the earlier hour; nothing else counts', async (t) => {
  const [a, b] = [await insertTenant(sql), await insertTenant(sql)];
  const ann = await contact(a, 'ann@example.test');
  const bob = await contact(a, 'bob@example.test');
  const cid = await contact(a, 'cid@example.test');
  const other = await contact(b, 'ann@example.test');
  // Ann: two opens at 09 UTC, one at 17 UTC, three machine opens at 03 UTC, five opens at 06 UTC 100 days ago.
  await open(a, 'ann@example.test', new Date('2026-06-14T09:05:00Z'));
  await open(a, 'ann@example.test', new Date('2026-06-13T09:55:00Z'));
  await open(a, 'ann@example.test', new Date('2026-06-12T17:00:00Z'));
  for (let i = 0; i < 3; i++) await open(a, 'ann@example.test', new Date(`2026-06-1${i}T03:00:00Z`), { machine: true });
  for (let i = 0; i < 5; i++) await open(a, 'ann@example.test', hoursAgo(100 * 24 + i));
  // Bob: one at 20 and one at 08: a tie, the earlier hour wins.
  await open(a, 'bob@example.test', new Date('2026-06-10T20:00:00Z'));
  await open(a, 'bob@example.test', new Date('2026-06-11T08:00:00Z'));
  // Another tenant's opens of the same address at 22 count for that tenant's contact only.
  await open(b, 'ann@example.test', new Date('2026-06-11T22:00:00Z'));

  t.same(await refreshBestSendHours(sql, NOW), { updated: 3, cleared: 0 });
  t.equal(await hourOf(ann), 9, 'most opens (machine opens and opens older than 90 days left out)');
  t.equal(await hourOf(bob), 8, 'a tie goes to the earlier hour');
  t.equal(await hourOf(cid), null, 'no opens: null');
  t.equal(await hourOf(other), 22, "per tenant: another tenant's contact of the same address");

  t.same(await refreshBestSendHours(sql, NOW), { updated: 0, cleared: 0 }, 'a second run changes nothing');
  // 95 days later every open is out of the window.
  t.same(await refreshBestSendHours(sql, new Date(NOW.getTime() + 95 * 86_400_000)), { updated: 0, cleared: 3 });
  t.equal(await hourOf(ann), null, 'back to null');
});
