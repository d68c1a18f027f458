// One recorder batch of several tenants' hits: each tenant's subscribed webhook endpoints and goals are read with the sends (in the batch's first round
// trip) and applied to its own hits only.
import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import t from 'tap';
import { loadConfig } from '../../../../shared/config/index.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { HitRecorder, type Hit } from '../../../../shared/engagement/tracking/recorder.js';
import { TrafficRules } from '../../../../shared/engagement/tracking/traffic-rules.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';
import { HUMAN_UA } from '../../../helpers/tracking.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 3, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});
const config = loadConfig({ DATABASE_URL: db.url, MAILPATH_DATA_DIR: '/nonexistent' });
const recorder = new HitRecorder(sql, createLogger('silent'), new TrafficRules(config.tracking), { maxBatch: 100, concurrency: 1 });

async function send(tenantId: string): Promise<string> {
  const id = randomUUID();
  await sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    values (${id}, ${tenantId}, 'api', 'live', 'delivered', 'n@shop.example', 'r@dest.example', 'Hi', ${`${id}@shop.example`}, 'b@shop.example',
            '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`;
  return id;
}

t.test('webhook deliveries and goal conversions for the subscribed tenant, none for the other, in one batch', async (t) => {
  const [subscriber, quiet] = [await insertTenant(sql), await insertTenant(sql)];
  await sql`
    insert into event_webhooks (id, tenant_id, url, event_types, secret_sealed, created_at, updated_at)
    values (${randomUUID()}, ${subscriber}, 'https://hooks.example/in', ${['opened', 'clicked']}, 'sealed', now(), now())`;
  await sql`
    insert into goals (tenant_id, name, match_type, match_value, revenue_cents, created_at, updated_at)
    values (${subscriber}, 'Checkout', 'prefix', 'https://shop.example/checkout', 500, now(), now())`;
  const [a, b] = [await send(subscriber), await send(quiet)];
  const at = new Date('2026-05-04T10:00:00Z');
  const hit = (sendId: string, kind: 'open' | 'click'): Hit =>
    kind === 'open'
      ? { kind, sendId, userAgent: HUMAN_UA, ip: '203.0.113.0', at }
      : { kind, sendId, url: 'https://shop.example/checkout?id=1', links: 1, userAgent: HUMAN_UA, ip: '203.0.113.0', at };
  // Issued together: one batch.
  const outcomes = await Promise.all(
    [hit(a, 'open'), hit(a, 'click'), hit(b, 'open'), hit(b, 'click'), hit(randomUUID(), 'open')].map((h) => recorder.record(h)),
  );
  t.same(outcomes, ['recorded', 'recorded', 'recorded', 'recorded', 'unknown_send']);
  const queued = await sql<{ tenant_id: string; event_type: string }[]>`select tenant_id, event_type from event_webhook_deliveries order by event_type`;
  t.same(
    queued.map((q) => [q.tenant_id, q.event_type]),
    [
      [subscriber, 'clicked'],
      [subscriber, 'opened'],
    ],
    "the subscriber's hits are queued for its endpoint",
  );
  const conversions = await sql<{ tenant_id: string; revenue_cents: number }[]>`select tenant_id, revenue_cents::int from goal_conversions`;
  t.same(conversions, [{ tenant_id: subscriber, revenue_cents: 500 }], "the click converts for its tenant's goal");
  const ids = await sql<{ id: string }[]>`select id::text from events order by id`;
  t.equal(ids.length, 4);
  t.ok(
    ids.every((r) => r.id[14] === '7'),
    'event ids are time-ordered (version 7)',
  );
});
