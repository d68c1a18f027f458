// GET /reputation: per sending domain, outcome counts and rates over 1, 7 and 30 days (test-key, dropped and unsettled sends left out; machine opens and
// scanner clicks not engagement), the warm-up tier with today's cap and count, the trust score; scopes and tenant isolation.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { HUMAN_UA, markDelivered, plainSend } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const s = await buildTestApp(t, { clock });
const { app, ctx, sql } = s;
const owner = await registerTenant(app);
const other = await registerTenant(app);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** A send of the domain created `ageMs` ago, as the delivery path leaves it, with its later events. */
async function seed(
  domainId: string,
  ageMs: number,
  status: string,
  o: { mode?: 'live' | 'test'; events?: [type: string, detail?: Record<string, unknown>][] } = {},
) {
  const id = randomUUID();
  const at = new Date(clock.now().getTime() - ageMs);
  await sql`
    insert into sends (id, tenant_id, domain_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    values (${id}, ${owner.tenantId}, ${domainId}, 'api', ${o.mode ?? 'live'}, ${status}, 'a@x.example', ${`r-${id.slice(0, 8)}@dest.example`}, 'Hi',
            ${`${id}@x`}, 'b@x.example', ${at}, ${at})`;
  for (const [type, detail] of o.events ?? []) {
    await sql`
      insert into events (id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at)
      values (${randomUUID()}, ${owner.tenantId}, ${type}, ${type === 'bounce' ? 'hard' : null}, ${id}, ${`${id}@x`}, 'r@dest.example',
              ${sql.json((detail ?? {}) as never)}, ${new Date(at.getTime() + HOUR)})`;
  }
}

/** Signs in again (session tokens expire as the clock moves on). */
async function signIn(tenant: typeof owner): Promise<void> {
  const res = await call(app, 'POST', '/auth/login', { body: { email: tenant.email, password: tenant.password } });
  if (res.status !== 200) throw new Error(`login: ${res.status}`);
  tenant.token = res.body.data.token;
}

const reputation = async (token = owner.token) => {
  const res = await call(app, 'GET', '/reputation', { token });
  if (res.status !== 200) throw new Error(`reputation: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as {
    generated_at: string;
    domains: { domain_id: string; domain: string; verified: boolean; windows: Record<string, unknown>[]; warmup: unknown; trust_score: any }[];
  };
};

t.test('windows, rates, warm-up and trust score per domain', async (t) => {
  // A real send through the send path (gated: today's counter is 1), delivered and opened by a person through /o.
  const p = await plainSend(ctx, { tenantId: owner.tenantId });
  const [row] = await sql<{ domain_id: string }[]>`select domain_id from sends where id = ${p.sendId}`;
  const mixed = row!.domain_id;
  await markDelivered(sql, p.sendId, clock.now());
  clock.advance(HOUR);
  const open = await app.inject({ method: 'GET', url: p.open, headers: { 'user-agent': HUMAN_UA }, remoteAddress: '203.0.113.5' });
  t.equal(open.statusCode, 200);

  // The last day: delivered, bounced, machine-opened only, scanner-clicked only, complained.
  await seed(mixed, 2 * HOUR, 'delivered');
  await seed(mixed, 2 * HOUR, 'bounced', { events: [['bounce']] });
  await seed(mixed, 2 * HOUR, 'delivered', { events: [['open', { machine: true }]] });
  await seed(mixed, 2 * HOUR, 'delivered', { events: [['click', { scanner: true, url: 'https://x.example/' }]] });
  await seed(mixed, 2 * HOUR, 'delivered', { events: [['complaint']] });
  // The last 7 days: delivered then bounced (a bounce report), retries exhausted, a human click.
  await seed(mixed, 3 * DAY, 'delivered', { events: [['bounce']] });
  await seed(mixed, 3 * DAY, 'failed');
  await seed(mixed, 3 * DAY, 'delivered', { events: [['click', { scanner: false, url: 'https://x.example/' }]] });
  // The last 30 days: delivered; a test-key send, a dropped and a queued one (none counts).
  await seed(mixed, 20 * DAY, 'delivered');
  await seed(mixed, 20 * DAY, 'delivered', { mode: 'test' });
  await seed(mixed, 20 * DAY, 'dropped');
  await seed(mixed, 20 * DAY, 'queued');
  // Older than 30 days: outside every window.
  await seed(mixed, 40 * DAY, 'bounced');

  // A healthy domain on tier 3 with 120 sends today: 100 delivered, 30 of them opened by people.
  const healthy = await verifiedSendingDomain(sql, ctx.vault, owner.tenantId);
  await sql`insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at, last_send_at)
            values (${healthy.id}, ${owner.tenantId}, 3, ${clock.now()}, ${clock.now()})`;
  await sql`insert into warmup_daily_counters (tenant_id, domain_id, day, sent)
            values (${owner.tenantId}, ${healthy.id}, ${clock.now().toISOString().slice(0, 10)}, 120)`;
  for (let i = 0; i < 100; i++) await seed(healthy.id, 5 * HOUR, 'delivered', { events: i < 30 ? [['open', { machine: false }]] : [] });

  // An idle domain: tier 5, but its last send was 20 days ago (the gate would reset it to tier 0).
  const idle = await verifiedSendingDomain(sql, ctx.vault, owner.tenantId);
  await sql`insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at, last_send_at)
            values (${idle.id}, ${owner.tenantId}, 5, ${clock.now()}, ${new Date(clock.now().getTime() - 20 * DAY)})`;

  const data = await reputation();
  t.equal(data.generated_at, clock.now().toISOString());
  t.equal(data.domains.length, 3);
  const byId = new Map(data.domains.map((d) => [d.domain_id, d]));

  const m = byId.get(mixed)!;
  t.equal(m.verified, true);
  t.same(m.windows, [
    {
      days: 1,
      sent: 6,
      delivered: 5,
      bounced: 1,
      complained: 1,
      engaged: 1,
      delivery_rate: 0.8333,
      bounce_rate: 0.1667,
      complaint_rate: 0.2,
      engagement_rate: 0.2,
    },
    {
      days: 7,
      sent: 9,
      delivered: 6,
      bounced: 3,
      complained: 1,
      engaged: 2,
      delivery_rate: 0.6667,
      bounce_rate: 0.3333,
      complaint_rate: 0.1667,
      engagement_rate: 0.3333,
    },
    {
      days: 30,
      sent: 10,
      delivered: 7,
      bounced: 3,
      complained: 1,
      engaged: 2,
      delivery_rate: 0.7,
      bounce_rate: 0.3,
      complaint_rate: 0.1429,
      engagement_rate: 0.2857,
    },
  ]);
  t.same(m.warmup, { tier: 0, daily_cap: 50, sent_today: 1, remaining_today: 49 }, 'the real send went through the gate');
  t.same(m.trust_score, {
    score: 10,
    tier: 'at-risk',
    factors: [
      { name: 'delivery', weight: 0.35, value: 0 },
      { name: 'bounce', weight: 0.3, value: 0 },
      { name: 'complaint', weight: 0.25, value: 0 },
      { name: 'engagement', weight: 0.1, value: 1 },
    ],
  });

  const h = byId.get(healthy.id)!;
  t.match(h.windows[2], {
    days: 30,
    sent: 100,
    delivered: 100,
    bounced: 0,
    complained: 0,
    engaged: 30,
    delivery_rate: 1,
    bounce_rate: 0,
    complaint_rate: 0,
    engagement_rate: 0.3,
  });
  t.same(h.warmup, { tier: 3, daily_cap: 500, sent_today: 120, remaining_today: 380 });
  t.match(h.trust_score, { score: 100, tier: 'excellent' });

  const i = byId.get(idle.id)!;
  t.same(
    i.windows.map((w) => [w['sent'], w['delivery_rate'], w['engagement_rate']]),
    [
      [0, null, null],
      [0, null, null],
      [0, null, null],
    ],
  );
  t.same(i.warmup, { tier: 0, daily_cap: 50, sent_today: 0, remaining_today: 50 });
  t.equal(i.trust_score, null, 'nothing sent in 30 days: no score');

  // A day later the 2-hour-old sends leave the 1-day window.
  clock.advance(DAY);
  await signIn(owner);
  const later = (await reputation()).domains.find((d) => d.domain_id === mixed)!;
  t.match(later.windows[0], { days: 1, sent: 0, delivery_rate: null });
  t.same(later.warmup, { tier: 0, daily_cap: 50, sent_today: 0, remaining_today: 50 }, 'a new UTC day');
});

t.test('scope reputation:read; another tenant sees only its own domains', async (t) => {
  await signIn(other);
  const reader = await createKey(app, owner, { scopes: ['reputation:read'] });
  const wrong = await createKey(app, owner, { scopes: ['campaigns:read', 'domains:read'] });
  t.ok((await reputation(reader.key)).domains.length > 0);
  const refused = await call(app, 'GET', '/reputation', { token: wrong.key });
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'invalid_scope');
  t.equal((await call(app, 'GET', '/reputation')).status, 401);

  t.same((await reputation(other.token)).domains, [], 'the other tenant has no domain');
  const theirs = await verifiedSendingDomain(sql, ctx.vault, other.tenantId);
  const seen = (await reputation(other.token)).domains.map((d) => d.domain_id);
  t.same(seen, [theirs.id]);
  t.notOk((await reputation()).domains.some((d) => d.domain_id === theirs.id));
});
