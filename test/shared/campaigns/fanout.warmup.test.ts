// The warm-up cap on a campaign: it sends what the day allows, then waits for the next 00:00 UTC window saying why, without a deferred send per waiting
// recipient; with the clock moved on, the next day goes on.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { FANOUT_JOBS } from '../../../shared/campaigns/fanout-jobs.js';
import { nextUtcMidnight } from '../../../shared/deliverability/warmup/tiers.js';
import { call, createKey } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, sender, sendNow } from '../../helpers/campaigns.js';

const clock = new ManualClock(new Date());
const s = await campaignApp(t, { clock, env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[5]' } });
const { sql } = s;

t.test('a cap of 5 and 12 recipients: 5 a day, waiting_until the next 00:00 UTC, no deferred sends, done on the third day', async (t) => {
  const a = await sender(s);
  // API keys do not expire with the clock moved on (sessions would).
  const { key } = await createKey(s.app, a.tenant);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses('w', 12));
  const c = await createCampaign(s, key, { list_id: listId, from_email: a.from });
  await sendNow(s, key, c.id);

  const state = async () => {
    const view = (await call(s.app, 'GET', `/campaigns/${c.id}`, { token: key })).body.data;
    const [sends] = await sql<{ all: number; deferred: number }[]>`
      select count(*)::int as all, count(*) filter (where status = 'deferred')::int as deferred from sends where campaign_id = ${c.id}`;
    const [events] = await sql<{ n: number }[]>`select count(*)::int as n from events where campaign_id = ${c.id} and type = 'deferred'`;
    const jobs = await sql<{ start_after: Date }[]>`
      select start_after from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${c.id} and state = 'created' and start_after > now()`;
    return { view, sends: sends!, deferredEvents: events!.n, jobs };
  };

  for (const [day, queued] of [
    [1, 5],
    [2, 10],
  ] as const) {
    const now = clock.now();
    t.equal(await drain(s, c.id), 'waiting', `day ${day}: waiting`);
    const { view, sends, deferredEvents, jobs } = await state();
    t.equal(view.status, 'sending');
    t.equal(view.progress.queued, queued, `day ${day}: ${queued} queued in all`);
    t.equal(view.progress.remaining, 12 - queued);
    t.equal(view.waiting_reason, 'warmup_cap', 'it says why it waits');
    t.equal(view.waiting_until, nextUtcMidnight(now).toISOString(), 'until the next 00:00 UTC');
    t.equal(sends.all, queued, 'a send exists only for each recipient sent');
    t.equal(sends.deferred, 0, 'no deferred send for the waiting recipients');
    t.equal(deferredEvents, 0, 'no deferred events either');
    t.ok(
      jobs.some((j) => j.start_after.toISOString() === view.waiting_until),
      'the next run is queued for the window',
    );
    // Running again the same day changes nothing.
    t.equal(await drain(s, c.id), 'waiting');
    t.equal((await state()).sends.all, queued);
    clock.set(new Date(nextUtcMidnight(now).getTime() + 60_000));
  }
  t.equal(await drain(s, c.id), 'completed', 'day 3: the last two');
  const { view, sends } = await state();
  t.equal(view.status, 'sent');
  t.equal(view.waiting_reason, null);
  t.equal(view.waiting_until, null);
  t.equal(view.progress.queued, 12);
  t.equal(sends.all, 12);
  t.equal(sends.deferred, 0);
});
