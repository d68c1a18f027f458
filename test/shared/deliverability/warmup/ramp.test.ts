// The auto-ramp on an injected clock with synthetic delivery outcomes: tier 0 to 10 day by day, idempotent re-runs, holds, a demotion, the auto-pause and
// its resume, the 14-day reset.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { warmupGate } from '../../../../shared/deliverability/warmup/gate.js';
import { applyOverride } from '../../../../shared/deliverability/warmup/overrides.js';
import { runAutoRamp } from '../../../../shared/deliverability/warmup/ramp.js';
import { classify, decide, ratesOf } from '../../../../shared/deliverability/warmup/ramp-rules.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const warmup = {
  tier_caps: [50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000],
  reset_after_idle_days: 14,
  initial_tier: 0,
  auto_ramp: {
    min_sends_to_judge: 20,
    healthy_bounce_rate_below: 0.03,
    healthy_complaint_rate_below: 0.001,
    healthy_delivery_rate_above: 0.95,
    bad_bounce_rate_above: 0.05,
    bad_complaint_rate_above: 0.003,
    pause_bounce_rate_at: 0.03,
  },
  per_esp_caps: { gmail: 1000 },
  per_esp_enforce: false,
  schedule_from_local_part: 'hello',
};
const DAY = 86_400_000;

async function setup(t: { teardown(fn: () => unknown): void }) {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const tenantId = await insertTenant(sql);
  const [d] = await sql<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at)
    values (${tenantId}, ${`${randomUUID().slice(0, 8)}.example`}, 'x', now(), now(), '2026-01-01T00:00:00Z') returning id`;
  // An unverified domain: never judged.
  const [u] = await sql<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, created_at)
    values (${tenantId}, ${`${randomUUID().slice(0, 8)}.example`}, 'y', '2026-01-01T00:00:00Z') returning id`;
  const clock = new ManualClock(new Date('2026-03-01T02:00:00Z'));
  // No campaigns in this database: the overrides' wake-up of waiting campaigns never queues a job.
  const deps = { sql, config: { warmup, campaigns: {} as never }, clock, log: createLogger('silent'), boss: {} as never };
  return { sql, tenantId, domainId: d!.id, unverifiedId: u!.id, clock, deps };
}

/**
 * Synthetic outcomes of one UTC day: `sent` live sends at noon, the first `bounced` of them bounced
 * (hard), then `delivered` delivered, and `complained` complaints on delivered ones. The day also
 * counts as a sending day for the idle reset (as the warm-up gate would have marked it).
 */
async function outcomes(
  sql: Sql,
  s: { tenantId: string; domainId: string },
  day: string,
  o: { sent: number; bounced?: number; delivered?: number; complained?: number },
) {
  const at = new Date(`${day}T12:00:00Z`);
  const bounced = o.bounced ?? 0;
  const delivered = o.delivered ?? o.sent - bounced;
  const complained = o.complained ?? 0;
  for (let i = 0; i < o.sent; i++) {
    const id = randomUUID();
    const status = i < bounced ? 'bounced' : i < bounced + delivered ? 'delivered' : 'failed';
    const to = `r${i}@gmail.com`;
    await sql`
      insert into sends (id, tenant_id, domain_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
      values (${id}, ${s.tenantId}, ${s.domainId}, 'api', 'live', ${status}, 'a@x.example', ${to}, 's', ${id}, 'b@x', ${at}, ${at})`;
    const events: [string, string | null][] = status === 'bounced' ? [['bounce', 'hard']] : status === 'delivered' ? [['delivered', null]] : [];
    if (status === 'delivered' && i - bounced < complained) events.push(['complaint', null]);
    for (const [type, subtype] of events) {
      await sql`insert into events (id, tenant_id, type, subtype, send_id, recipient, occurred_at)
                values (${randomUUID()}, ${s.tenantId}, ${type}, ${subtype}, ${id}, ${to}, ${at})`;
    }
  }
  await sql`update domain_warmup set last_send_at = ${at} where domain_id = ${s.domainId}`;
}

const tierOf = async (sql: Sql, domainId: string) => (await sql<{ tier: number }[]>`select tier from domain_warmup where domain_id = ${domainId}`)[0]?.tier;
const lastMove = async (sql: Sql, domainId: string) =>
  (
    await sql`select source, action, from_tier, to_tier, reason, rates, to_char(rates_day, 'YYYY-MM-DD') as rates_day from warmup_moves
              where domain_id = ${domainId} order by id desc limit 1`
  )[0];

t.test('classification follows the spec table; a bad day at 3% bounces or more pauses, below demotes', async (t) => {
  const c = warmup.auto_ramp;
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 990, bounced: 10, complained: 0 })), 'healthy');
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 960, bounced: 40, complained: 0 })), 'mixed', '4% bounces: borderline');
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 940, bounced: 0, complained: 0 })), 'mixed', '94% delivered: borderline');
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 998, bounced: 0, complained: 2 })), 'mixed', '0.2% complaints: borderline');
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 940, bounced: 60, complained: 0 })), 'bad');
  t.equal(classify(c, ratesOf({ sent: 1000, delivered: 1000, bounced: 0, complained: 4 })), 'bad');
  const state = { tier: 4, paused: false, held: false, idleDays: 1 };
  t.match(decide(warmup, state, ratesOf({ sent: 1000, delivered: 940, bounced: 60, complained: 0 })), { action: 'pause', toTier: 4, reason: 'bounce_pause' });
  t.match(
    decide(warmup, state, ratesOf({ sent: 1000, delivered: 970, bounced: 30, complained: 4 })),
    { action: 'pause' },
    'bad by complaints with 3% bounces pauses too',
  );
  t.match(decide(warmup, state, ratesOf({ sent: 1000, delivered: 990, bounced: 10, complained: 4 })), {
    action: 'demote',
    toTier: 3,
    reason: 'bad_complaints',
  });
  t.match(decide(warmup, { ...state, tier: 0 }, ratesOf({ sent: 1000, delivered: 990, bounced: 10, complained: 4 })), {
    action: 'hold',
    reason: 'bottom_tier',
  });
  t.match(decide(warmup, { ...state, tier: 10 }, ratesOf({ sent: 1000, delivered: 1000, bounced: 0, complained: 0 })), { action: 'hold', reason: 'top_tier' });
  t.match(decide(warmup, { ...state, held: true }, ratesOf({ sent: 1000, delivered: 1000, bounced: 0, complained: 0 })), { action: 'hold', reason: 'held' });
  t.match(
    decide(warmup, { ...state, held: true }, ratesOf({ sent: 1000, delivered: 940, bounced: 60, complained: 0 })),
    { action: 'pause' },
    'a freeze does not stop the pause',
  );
  t.match(decide(warmup, state, ratesOf({ sent: 19, delivered: 19, bounced: 0, complained: 0 })), { action: 'hold', reason: 'too_few_sends' });
  t.match(decide(warmup, { ...state, idleDays: 14.5 }, ratesOf({ sent: 0, delivered: 0, bounced: 0, complained: 0 })), {
    action: 'reset',
    toTier: 0,
    reason: 'idle',
  });
  t.match(decide(warmup, { ...state, idleDays: 13.9 }, ratesOf({ sent: 0, delivered: 0, bounced: 0, complained: 0 })), {
    action: 'hold',
    reason: 'too_few_sends',
  });
  const warmStart = { ...warmup, initial_tier: 3 };
  t.match(
    decide(warmStart, { ...state, idleDays: 14.5 }, ratesOf({ sent: 0, delivered: 0, bounced: 0, complained: 0 })),
    { action: 'reset', toTier: 3 },
    'idle: back to initial_tier',
  );
  t.match(decide(warmStart, { ...state, tier: 3, idleDays: 14.5 }, ratesOf({ sent: 0, delivered: 0, bounced: 0, complained: 0 })), {
    action: 'hold',
    reason: 'idle',
  });
});

t.test('a domain ramps from tier 0 to 10 one tier a day; same-day re-runs are no-ops; an unverified domain is never judged', async (t) => {
  const s = await setup(t);
  for (let day = 0; day < 11; day++) {
    const judged = new Date(s.clock.now().getTime() - DAY).toISOString().slice(0, 10);
    await outcomes(s.sql, s, judged, { sent: 40 });
    const first = await runAutoRamp(s.deps);
    t.match(first, { domains: 1, promote: day < 10 ? 1 : 0, hold: day < 10 ? 0 : 1, already_done: 0 }, `day ${day}`);
    t.equal(await tierOf(s.sql, s.domainId), Math.min(day + 1, 10));
    // Re-runs the same day (the schedule's retry, run-now, later in the day): nothing moves.
    s.clock.advance(3_600_000);
    t.match(await runAutoRamp(s.deps), { promote: 0, already_done: 1 }, 'the re-run is a no-op');
    t.equal(await tierOf(s.sql, s.domainId), Math.min(day + 1, 10), 'never more than one tier a day');
    s.clock.advance(DAY - 3_600_000);
  }
  t.match(await lastMove(s.sql, s.domainId), { source: 'auto', action: 'hold', reason: 'top_tier', from_tier: 10, to_tier: 10 });
  const moves = await s.sql`select action, reason, rates from warmup_moves where domain_id = ${s.domainId} and action = 'promote' order by id`;
  t.equal(moves.length, 10);
  t.match(
    moves[0],
    { reason: 'healthy', rates: { sent: 40, delivered: 40, bounced: 0, complained: 0, bounce_rate: 0, complaint_rate: 0, delivery_rate: 1, class: 'healthy' } },
    'each move keeps the rates it used',
  );
  t.equal((await s.sql`select count(*)::int as n from warmup_moves where domain_id = ${s.unverifiedId}`)[0]!.n, 0);
  t.same(
    await s.sql`select provider, daily_limit from warmup_esp_caps where tenant_id = ${s.tenantId}`,
    [{ provider: 'gmail', daily_limit: 1000 }],
    'sub-caps seeded from config',
  );
});

t.test('mixed and thin days hold; complaints demote; 6% bounces pause until a super-admin resumes; the gate defers a paused domain', async (t) => {
  const s = await setup(t);
  await s.sql`insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at) values (${s.domainId}, ${s.tenantId}, 5, '2026-02-01')`;
  const judged = () => new Date(s.clock.now().getTime() - DAY).toISOString().slice(0, 10);
  const nextDay = () => s.clock.advance(DAY);

  await outcomes(s.sql, s, judged(), { sent: 100, bounced: 4 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'mixed', to_tier: 5, rates: { bounce_rate: 0.04, class: 'mixed' } });

  nextDay();
  await outcomes(s.sql, s, judged(), { sent: 10 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'too_few_sends' });

  nextDay();
  await outcomes(s.sql, s, judged(), { sent: 200, complained: 1 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'demote', reason: 'bad_complaints', from_tier: 5, to_tier: 4, rates: { complaint_rate: 0.005 } });
  t.equal(await tierOf(s.sql, s.domainId), 4);

  nextDay();
  await outcomes(s.sql, s, judged(), { sent: 100, bounced: 6 });
  const paused = await runAutoRamp(s.deps);
  t.match(paused, { pause: 1 });
  t.match(await lastMove(s.sql, s.domainId), { action: 'pause', reason: 'bounce_pause', from_tier: 4, to_tier: 4 });
  const [row] = await s.sql`select paused_at, paused_reason from domain_warmup where domain_id = ${s.domainId}`;
  t.ok(row!['paused_at']);
  t.match(row!['paused_reason'], /bounce rate 6\.00%/);
  const gated = await warmupGate(s.sql, warmup, { tenantId: s.tenantId, domainId: s.domainId, at: s.clock.now(), recipientSuppressed: false });
  t.match(
    gated,
    { outcome: 'defer', paused: true, until: new Date(Date.parse(judged()) + 2 * DAY) },
    'a paused domain sends nothing: deferred to the next 00:00 UTC',
  );

  nextDay();
  await outcomes(s.sql, s, judged(), { sent: 100 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'paused' }, 'the ramp leaves a paused domain alone');

  const actor = { type: 'user' as const, id: randomUUID() };
  await applyOverride(s.deps, { tenantId: s.tenantId, domainId: s.domainId, action: 'resume', actor });
  t.match(await warmupGate(s.sql, warmup, { tenantId: s.tenantId, domainId: s.domainId, at: s.clock.now(), recipientSuppressed: false }), {
    outcome: 'allow',
    tier: 4,
  });
  nextDay();
  await outcomes(s.sql, s, judged(), { sent: 100 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'promote', to_tier: 5 }, 'resumed: the ramp moves it again');
});

t.test('a freeze holds the tier; 14 days without sends reset it to 0', async (t) => {
  const s = await setup(t);
  await s.sql`insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at) values (${s.domainId}, ${s.tenantId}, 6, '2026-02-01')`;
  const actor = { type: 'user' as const, id: randomUUID() };
  await applyOverride(s.deps, { tenantId: s.tenantId, domainId: s.domainId, action: 'hold', days: 2, actor });
  const judged = new Date(s.clock.now().getTime() - DAY).toISOString().slice(0, 10);
  await outcomes(s.sql, s, judged, { sent: 100 });
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'held', to_tier: 6 });

  // Last send at noon of the judged day (02-28): the run of 03-14 02:00 is 13.6 days on, that of 03-15 14.6.
  s.clock.advance(13 * DAY);
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'too_few_sends' });
  t.equal(await tierOf(s.sql, s.domainId), 6);
  s.clock.advance(DAY);
  t.match(await runAutoRamp(s.deps), { reset: 1 });
  t.match(await lastMove(s.sql, s.domainId), { action: 'reset', reason: 'idle', from_tier: 6, to_tier: 0 });
  t.equal(await tierOf(s.sql, s.domainId), 0);
  s.clock.advance(DAY);
  await runAutoRamp(s.deps);
  t.match(await lastMove(s.sql, s.domainId), { action: 'hold', reason: 'idle', to_tier: 0 }, 'at tier 0 an idle domain just holds');
});
