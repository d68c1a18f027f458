// Two hit recorders (two API processes) writing the same tenant, campaign and hours at once: no batch deadlocks itself out of storing a hit, every hit is
// stored once, and the counters match the events.
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
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
const admin = postgres(db.url, { max: 2, onnotice: () => {} });
// One pool per recorder, as two processes would have.
const pools = [postgres(db.url, { max: 3, onnotice: () => {} }), postgres(db.url, { max: 3, onnotice: () => {} })];
t.teardown(async () => {
  await Promise.all([admin.end(), ...pools.map((p) => p.end())]);
  await db.drop();
});

// Every open counts (the same sends are opened many times a second): no repeat-open window.
const config = loadConfig({ DATABASE_URL: db.url, MAILPATH_DATA_DIR: '/nonexistent', MAILPATH_CONFIG__TRACKING__REPEAT_OPENS__WINDOW_SECONDS: '0' });
const rules = new TrafficRules(config.tracking);
// What the recorders log: a batch that fails is logged (warn) before its hits are committed one by one; a batch run
// again after a deadlock is logged at info.
const logged: { level: number; msg: string; err?: { message?: string; detail?: string } }[] = [];
const logStream = new PassThrough();
logStream.on('data', (line: Buffer) => logged.push(JSON.parse(line.toString())));
const log = createLogger('info', logStream);
// Small batches and two in flight per recorder: many transactions overlap.
const recorders = pools.map((p) => new HitRecorder(p, log, rules, { maxBatch: 6, concurrency: 2 }));

const tenantId = await insertTenant(admin);
const [campaign] = await admin<
  { id: string }[]
>`insert into campaigns (tenant_id, name, status, created_at, updated_at) values (${tenantId}, 'Spring', 'sending', now(), now()) returning id`;
const campaignId = campaign!.id;
const COUNTRIES = ['FR', 'DE', ''];
const LINKS = ['https://shop.example/a', 'https://shop.example/b', 'https://shop.example/c'];

/** Sends delivered long before the hits (no delivery-time rule applies); a campaign's ones with a recipient row and a contact. */
async function sends(n: number, withCampaign: boolean): Promise<string[]> {
  const ids = Array.from({ length: n }, () => randomUUID());
  for (const [i, id] of ids.entries()) {
    const email = `r-${id.slice(0, 8)}@dest.example`;
    let contactId: string | null = null;
    if (withCampaign) {
      const [c] = await admin<{ id: string }[]>`
        insert into contacts (tenant_id, email, status, country, created_at, updated_at)
        values (${tenantId}, ${email}, 'active', ${COUNTRIES[i % 3] || null}, now(), now()) returning id`;
      contactId = c!.id;
      await admin`
        insert into campaign_recipients (campaign_id, contact_id, tenant_id, email, status, send_id, seq)
        values (${campaignId}, ${contactId}, ${tenantId}, ${email}, 'queued', ${id}, ${i + 1})`;
    }
    await admin`
      insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, campaign_id, contact_id, created_at,
                         updated_at)
      values (${id}, ${tenantId}, ${withCampaign ? 'campaign' : 'api'}, 'live', 'delivered', 'news@shop.example', ${email}, 'Spring', ${`${id}@shop.example`},
              'b@shop.example',
        ${withCampaign ? campaignId : null}, ${contactId}, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`;
  }
  return ids;
}

const open = (sendId: string, at: Date): Hit => ({ kind: 'open', sendId, userAgent: HUMAN_UA, ip: '203.0.113.0', at });
const click = (sendId: string, url: string, at: Date): Hit => ({ kind: 'click', sendId, url, links: LINKS.length, userAgent: HUMAN_UA, ip: '203.0.113.0', at });

t.test('concurrent batches of two recorders over the same campaign and hours, in opposite orders: every hit stored once, counters match', async (t) => {
  const ROUNDS = 8;
  const campaignSends = await sends(24, true);
  const plainSends = await sends(12, false);
  const hits: Hit[][] = [[], []];
  let opens = 0;
  let clicks = 0;
  for (let round = 0; round < ROUNDS; round++) {
    // Each round straddles its own hour boundary: hour 1 before `boundary`, hour 2 from it.
    const boundary = Date.parse('2026-05-04T10:00:00Z') + round * 3_600_000;
    const at = (ms: number) => new Date(boundary + ms);
    const [first, second] = [[] as Hit[], [] as Hit[]];
    // The first recorder sees hour 1 first and the sends in one order, the second hour 2 first and the sends in the
    // other. A send's three clicks within 5 s across the boundary are "every link at once": the one that completes
    // the burst re-flags the earlier, stored ones (an update of events in the other hour).
    for (const id of campaignSends) first.push(open(id, at(-60_000)), click(id, LINKS[0]!, at(-2_000)));
    for (const id of [...campaignSends].reverse()) second.push(open(id, at(60_000)));
    // Transactional sends of the same tenant: opens in both hours in one batch.
    for (const id of plainSends) first.push(open(id, at(-30_000)), open(id, at(30_000)));
    for (const id of [...plainSends].reverse()) second.push(open(id, at(45_000)), open(id, at(-45_000)));
    for (const id of [...campaignSends].reverse()) second.push(click(id, LINKS[1]!, at(500)), click(id, LINKS[2]!, at(1_500)));
    hits[0]!.push(...first);
    hits[1]!.push(...second);
    opens += campaignSends.length * 2 + plainSends.length * 4;
    clicks += campaignSends.length * 3;
  }
  const outcomes = await Promise.allSettled(hits.flatMap((list, r) => list.map((h) => recorders[r]!.record(h))));
  const failed = outcomes.filter((o) => o.status === 'rejected');
  t.same(
    failed.map((f) => String((f as PromiseRejectedResult).reason)),
    [],
    'no hit failed to record',
  );
  t.ok(
    outcomes.every((o) => o.status === 'fulfilled' && o.value === 'recorded'),
    'every hit answered as recorded',
  );

  const [events] = await admin<{ opens: number; clicks: number; ids: number }[]>`
    select count(*) filter (where type = 'open')::int as opens, count(*) filter (where type = 'click')::int as clicks, count(distinct id)::int as ids
    from events where tenant_id = ${tenantId} and type in ('open', 'click')`;
  t.same(events, { opens, clicks, ids: opens + clicks }, 'each hit stored exactly once');

  // Which clicks end up a scanner's depends on the order the batches commit in; the counters must agree with the stamps and events whatever it was.
  const [stamps] = await admin<{ opened: number; clicked: number; human_clicked: number; unbacked: number }[]>`
    select count(first_open_at)::int as opened, count(first_click_at)::int as clicked, count(first_human_click_at)::int as human_clicked,
      count(*) filter (where first_human_click_at is not null and not exists (
        select 1 from events e where e.send_id = r.send_id and e.type = 'click' and e.occurred_at = r.first_human_click_at
          and not coalesce((e.detail ->> 'scanner')::boolean, false)))::int as unbacked
    from campaign_recipients r where campaign_id = ${campaignId}`;
  t.match(
    stamps,
    { opened: campaignSends.length, clicked: campaignSends.length, unbacked: 0 },
    'each recipient stamped; each first human click is a stored human click',
  );
  const [stats] = await admin`
    select total_opens::int, unique_opens::int, unique_human_opens::int, total_clicks::int, unique_clicks::int, unique_human_clicks::int
    from campaign_stats where campaign_id = ${campaignId} and variant = ''`;
  const campaignOpens = ROUNDS * campaignSends.length * 2;
  t.same(
    stats,
    {
      total_opens: campaignOpens,
      unique_opens: campaignSends.length,
      unique_human_opens: campaignSends.length,
      total_clicks: clicks,
      unique_clicks: campaignSends.length,
      unique_human_clicks: stamps!.human_clicked,
    },
    'the campaign counters match the events and stamps',
  );
  const countries = await admin<{ country: string; unique_opens: number; unique_clicks: number; unique_human_clicks: number }[]>`
    select c.country, c.unique_opens::int, c.unique_clicks::int, c.unique_human_clicks::int,
      (select count(r.first_human_click_at)::int from campaign_recipients r join contacts p on p.id = r.contact_id
        where r.campaign_id = c.campaign_id and coalesce(p.country, '') = c.country) as stamped
    from campaign_country_stats c where c.campaign_id = ${campaignId} order by c.country`;
  t.same(
    countries.map((c) => c.country),
    ['', 'DE', 'FR'],
  );
  for (const c of countries)
    t.match(
      c,
      { unique_opens: 8, unique_clicks: 8, unique_human_clicks: (c as unknown as { stamped: number }).stamped },
      `the unique counts of country '${c.country}' match`,
    );
  const [hourly] = await admin<{ opens: number; clicks: number }[]>`
    select coalesce(sum(opens), 0)::int as opens, coalesce(sum(clicks), 0)::int as clicks from campaign_hourly_stats where campaign_id = ${campaignId}`;
  t.same(hourly, { opens: campaignOpens, clicks }, 'the hourly campaign counters match');
  const [stale] = await admin<{ n: number }[]>`select count(distinct hour)::int as n from analytics_stale_hours where tenant_id = ${tenantId}`;
  t.equal(stale!.n, ROUNDS + 1, 'every hour touched is marked stale for the rollup');

  // Every writer takes its row locks in one order and the stale-hour marks lock nothing (migration 103): no batch
  // deadlocked, so none was run again (the retry is for writers elsewhere), and none was left to the one-by-one
  // fallback (where a hit can fail alone).
  await new Promise((r) => setImmediate(r));
  t.same(
    logged.filter((l) => l.level >= 40).map((l) => l.msg),
    [],
    'no batch failed',
  );
  const retried = logged.filter((l) => l.level === 30).map((l) => `${l.err?.message}: ${l.err?.detail ?? ''}`);
  t.same(retried, [], 'no batch met a deadlock');
});
