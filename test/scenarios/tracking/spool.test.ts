// The tracking endpoints as deployed by default (config/tracking.yaml recorder): hits answered once spooled in the
// data dir and recorded on a thread of its own, stored in PostgreSQL right behind the answer, the spool left empty.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { HIT_SPOOL_DIR } from '../../../main/hit-sink.js';
import { SpooledHitRecorder } from '../../../shared/engagement/tracking/spooled-recorder.js';
import { buildTestApp } from '../../helpers/app.js';
import { campaignSend, campaignStats, engagementEvents, HUMAN_UA, markDelivered } from '../../helpers/tracking.js';

const { app, ctx, sql, dataDir } = await buildTestApp(t, {
  env: { MAILPATH_CONFIG__TRACKING__RECORDER__SPOOL__ENABLED: 'true', MAILPATH_CONFIG__TRACKING__RECORDER__THREAD: 'true' },
});

t.test('an open and a click through the spool and the recorder thread: answered, stored, counted', async (t) => {
  t.ok(ctx.hits instanceof SpooledHitRecorder, 'the default deployment spools');
  const f = await campaignSend(ctx);
  await markDelivered(sql, f.sendId, new Date(Date.now() - 3_600_000));
  const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'user-agent': HUMAN_UA }, remoteAddress: '203.0.113.77' });
  t.equal((await get(f.open)).statusCode, 200);
  const click = await get(f.clicks[0]!);
  t.equal(click.statusCode, 302);
  t.equal(click.headers['location'], 'https://shop.example/sale?id=1');
  await (ctx.hits as SpooledHitRecorder).idle();
  t.same(
    (await engagementEvents(sql, f.sendId)).map((e) => [e.type, e.detail['ip']]),
    [
      ['open', '203.0.113.0'],
      ['click', '203.0.113.0'],
    ],
  );
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 1, unique_opens: 1, total_clicks: 1, unique_clicks: 1 });
  const dir = join(dataDir, HIT_SPOOL_DIR);
  t.ok(existsSync(dir));
  await ctx.hits.close();
  t.same(readdirSync(dir), [], 'every hit stored: no segment left');
});
