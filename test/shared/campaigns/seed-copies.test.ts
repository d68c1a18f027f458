// Seed copies meet the same gates as the campaign's recipients: the warm-up cap holds them for a later run (each still sent once), suppression drops one and
// a sandbox tenant simulates them (expected none, observed not_sent).
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { runFanout } from '../../../shared/campaigns/fanout.js';
import { createSeed, seedHits } from '../../../shared/deliverability/seed-mailboxes/service.js';
import { insertSuppression } from '../../../shared/audiences/suppressions/queries.js';
import { buildTestApp } from '../../helpers/app.js';
import { sentCampaign } from '../../helpers/seed-mailboxes.js';

const actor = { type: 'system' as const, id: null };

t.test('at the warm-up cap a copy is held, the campaign waits, and the next window sends the rest: every seed once', async (t) => {
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  const s = await buildTestApp(t, { clock, env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1]', MAILPATH_CONFIG__CAMPAIGNS__FANOUT__BATCH_SIZE: '5' } });
  const one = await createSeed(s.ctx, actor, { email: 'one@gmail.com', provider: 'gmail' });
  const two = await createSeed(s.ctx, actor, { email: 'two@outlook.com', provider: 'outlook' });
  const { campaignId, tenantId, outcome } = await sentCampaign(s.ctx, { contacts: 2 });
  t.equal(outcome, 'waiting', 'a cap of one a day: the campaign waits for the next window');
  const states = async () => (await s.sql`select send_state from seed_hits where campaign_id = ${campaignId} order by send_state`).map((r) => r['send_state']);
  t.same(await states(), ['pending', 'sent'], "the first copy took the day's one send; the other was released");

  // The runs of the following days (bounded): each window lets one more send out.
  for (let day = 0; day < 5; day++) {
    clock.advance(24 * 3_600_000);
    const next = await runFanout(s.ctx, { campaign_id: campaignId, slot: 0 });
    if (next === 'completed') break;
  }
  t.same(await states(), ['sent', 'sent']);
  const sends = await s.sql`select to_email, count(*)::int as n from sends where tenant_id = ${tenantId} group by to_email order by to_email`;
  t.equal(sends.length, 4, 'two contacts and two seeds');
  t.ok(
    sends.every((r) => r['n'] === 1),
    'each once',
  );
  const [stats] = await s.sql`select sum(targeted)::int as targeted, sum(queued)::int as queued from campaign_stats where campaign_id = ${campaignId}`;
  t.same(stats, { targeted: 2, queued: 2 });
  // The injected clock is days on: both copies left more than 24 hours ago (missing_after_hours) and were never seen.
  for (const seed of [one, two]) t.match((await seedHits(s.ctx, seed.id, { limit: 25, offset: 0 })).items[0], { expected: 'inbox', observed: 'missing' });
});

t.test("a seed suppressed by the tenant is dropped, and a sandbox tenant's copies are simulated: expected none, observed not_sent", async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]' } });
  const kept = await createSeed(s.ctx, actor, { email: 'kept@gmail.com', provider: 'gmail' });
  const blocked = await createSeed(s.ctx, actor, { email: 'blocked@yahoo.com', provider: 'yahoo' });
  const first = await sentCampaign(s.ctx, { contacts: 1, name: 'Warm-up' });
  await insertSuppression(s.sql, {
    tenantId: first.tenantId,
    email: 'blocked@yahoo.com',
    reason: 'manual',
    source: 'api',
    detail: null,
    messageId: null,
    at: new Date(),
  });
  const second = await sentCampaign(s.ctx, { contacts: 1, name: 'After the suppression', tenantId: first.tenantId });
  const view = async (id: string) =>
    (await seedHits(s.ctx, id, { limit: 25, offset: 0 })).items.map((i) => [i.hit.campaign_name, i.hit.send_status, i.expected, i.observed]);
  t.same(await view(blocked.id), [
    ['After the suppression', 'dropped', 'none', 'not_sent'],
    ['Warm-up', 'queued', 'inbox', 'pending'],
  ]);
  t.same(
    (await view(kept.id)).map((r) => r[3]),
    ['pending', 'pending'],
  );

  await s.sql`update tenants set is_sandbox = true where id = ${first.tenantId}`;
  const third = await sentCampaign(s.ctx, { contacts: 1, name: 'Sandboxed', tenantId: first.tenantId });
  t.equal(third.outcome, 'completed');
  t.same((await view(kept.id))[0], ['Sandboxed', 'simulated', 'none', 'not_sent']);
  t.ok(second.campaignId);
});
