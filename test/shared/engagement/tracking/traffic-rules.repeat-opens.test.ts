// Replaying a recipient's pixel does not inflate total_opens: opens of one message within the repeat-open window
// (config/tracking.yaml repeat_opens, 60 s) are stored and counted once, in a batch or across batches; a person's open
// after only machine opens still counts; after the window an open counts again.
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { buildTestApp } from '../../../helpers/app.js';
import { campaignSend, campaignStats, engagementEvents, HUMAN_UA, markDelivered } from '../../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const { app, ctx, sql, config } = await buildTestApp(t, { clock, env: { MAILPATH_CONFIG__TRACKING__REPEAT_OPENS__WINDOW_SECONDS: '60' } });

const open = (url: string, ua = HUMAN_UA) => app.inject({ method: 'GET', url, headers: { 'user-agent': ua }, remoteAddress: '203.0.113.77' });
const delivered = async () => {
  const f = await campaignSend(ctx);
  await markDelivered(sql, f.sendId, new Date(clock.now().getTime() - 3_600_000));
  return f;
};
const hourlyOpens = async (campaignId: string) =>
  Number((await sql`select coalesce(sum(opens), 0)::int as n from campaign_hourly_stats where campaign_id = ${campaignId}`)[0]!['n']);

t.test('the default window is 60 seconds', async (t) => {
  t.equal(config.tracking.repeat_opens.window_seconds, 60);
});

t.test('a pixel replayed in a loop, one after another and all at once, counts once', async (t) => {
  const f = await delivered();
  for (let i = 0; i < 20; i++) {
    clock.advance(1000);
    t.equal((await open(f.open)).statusCode, 200, 'every fetch still gets the image');
  }
  // At once: the hits share a batch, judged against each other.
  const answers = await Promise.all(Array.from({ length: 30 }, () => open(f.open)));
  t.ok(answers.every((a) => a.statusCode === 200));
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 1, unique_opens: 1, unique_human_opens: 1 });
  t.equal((await engagementEvents(sql, f.sendId, 'open')).length, 1, 'one event (the webhooks and the hourly opens see one)');
  t.equal(await hourlyOpens(f.campaignId!), 1);

  // The window runs from the open that counted (fetches it swallowed do not extend it): one at 60 s is still within it,
  // one past 60 s is a new open. A pixel fetched every second counts once a minute.
  clock.advance(41_000);
  await open(f.open);
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 1 }, '60 s after it: still the same open');
  clock.advance(1000);
  await open(f.open);
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 2, unique_opens: 1 }, 'a later open counts again');
});

t.test("a person's open after only machine opens counts; a machine's after a person's does not", async (t) => {
  const f = await delivered();
  clock.advance(1000);
  await open(f.open, 'Mozilla/5.0'); // Apple Mail Privacy Protection's prefetch
  clock.advance(1000);
  await open(f.open, 'Mozilla/5.0');
  clock.advance(1000);
  await open(f.open); // the reader
  clock.advance(1000);
  await open(f.open, 'Mozilla/5.0');
  await open(f.open);
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 2, unique_opens: 1, unique_human_opens: 1 });
  t.same(
    (await engagementEvents(sql, f.sendId, 'open')).map((e) => e.detail['machine']),
    [true, false],
  );
});

t.test('opens of different messages are counted apart', async (t) => {
  const a = await delivered();
  const b = await campaignSend(ctx, { campaignId: a.campaignId! });
  await markDelivered(sql, b.sendId, new Date(clock.now().getTime() - 3_600_000));
  clock.advance(1000);
  await Promise.all([open(a.open), open(b.open), open(a.open), open(b.open)]);
  t.match(await campaignStats(sql, a.campaignId!), { total_opens: 2, unique_opens: 2 });
});
