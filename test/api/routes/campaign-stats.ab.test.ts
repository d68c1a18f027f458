// A/B results and finalize through the API and the real fan-out: variant counts and rates from real opens, the z-test's recommendation, the winner sent to
// the held remainder exactly once, a second finalize 409, the refusals with their slugs, the audit row.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { insertEvents } from '../../../shared/engagement/events/queries.js';
import { linkBase, openUrl } from '../../../shared/engagement/tracking/link-tokens.js';
import { call, createKey } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, readCampaign, sender, sendNow, sendsPerRecipient } from '../../helpers/campaigns.js';
import { HUMAN_UA } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const s = await campaignApp(t, { clock });
const { app, ctx, sql } = s;
const HOUR = 3_600_000;

const a = await sender(s);
const { listId } = await listOf(sql, a.tenant.tenantId, addresses('ab', 20));
const base = linkBase(ctx.config.publicUrl);

const open = (sendId: string, ua = HUMAN_UA) => {
  clock.advance(1000);
  return app.inject({
    method: 'GET',
    url: openUrl(base, ctx.linkKey, sendId).slice(base.length),
    headers: { 'user-agent': ua },
    remoteAddress: '198.51.100.20',
  });
};
const results = async (id: string) => (await call(app, 'GET', `/campaigns/${id}/ab-results`, { token: a.tenant.token })).body.data;
const finalize = (id: string, winner: unknown, token = a.tenant.token) => call(app, 'POST', `/campaigns/${id}/ab/finalize`, { token, body: { winner } });

async function sendsOf(campaignId: string, variant: 'a' | 'b'): Promise<{ id: string; tenant_id: string; to_email: string }[]> {
  return sql<{ id: string; tenant_id: string; to_email: string }[]>`
    select id, tenant_id, to_email from sends where campaign_id = ${campaignId} and campaign_variant = ${variant} order by to_email`;
}

t.test('a campaign without an A/B test: has_ab_test false, and finalize is 422 naming winner', async (t) => {
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from });
  t.match(await results(c.id), {
    campaign_id: c.id,
    has_ab_test: false,
    variant_a: null,
    variant_b: null,
    winner: null,
    winner_declared_at: null,
    significance: null,
    recommendation: /no A\/B test/,
  });
  const res = await finalize(c.id, 'a');
  t.same([res.status, res.body.error], [422, 'validation_error']);
  t.match(res.body.message, /^winner: /);
});

t.test('the A/B flow: results per variant, a significant winner, finalize sends the remainder with it once', async (t) => {
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, subject: 'Subject A', subject_b: 'Subject B', ab_split_pct: 60 });
  const draft = await finalize(c.id, 'a');
  t.same([draft.status, draft.body.error], [409, 'conflict'], 'a draft has no test yet');
  t.match(await results(c.id), {
    has_ab_test: true,
    metric: 'open',
    variant_a: { sent: 0, delivered: 0, subject: 'Subject A' },
    variant_b: { sent: 0, subject: 'Subject B' },
    recommendation: /^No result yet/,
  });

  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'waiting');
  t.equal((await readCampaign(s, a.tenant.token, c.id)).waiting_reason, 'ab_winner');
  const va = await sendsOf(c.id, 'a');
  const vb = await sendsOf(c.id, 'b');
  t.same([va.length, vb.length], [6, 6], '60 % of 20: 6 and 6, 8 held');

  // Delivered (as the MTA records it), then read an hour later: 1 of 6 people open a, 5 of 6 open b; Apple's proxy opens one more a.
  const deliveredAt = clock.now();
  await insertEvents(
    sql,
    [...va, ...vb].map((send) => ({
      tenant_id: send.tenant_id,
      type: 'delivered' as const,
      subtype: null,
      send_id: send.id,
      message_id: null,
      recipient: send.to_email,
      detail: {},
      occurred_at: deliveredAt,
    })),
  );
  clock.advance(HOUR);
  await open(va[0]!.id);
  await open(va[1]!.id, 'Mozilla/5.0');
  for (const send of vb.slice(0, 5)) await open(send.id);
  await open(vb[0]!.id);

  const r = await results(c.id);
  t.match(r.variant_a, {
    variant: 'a',
    subject: 'Subject A',
    sent: 6,
    delivered: 6,
    unique_opens: 2,
    unique_human_opens: 1,
    unique_clicks: 0,
    open_rate: 0.3333,
    human_open_rate: 0.1667,
    click_rate: 0,
  });
  t.match(r.variant_b, {
    variant: 'b',
    subject: 'Subject B',
    sent: 6,
    delivered: 6,
    unique_opens: 5,
    unique_human_opens: 5,
    open_rate: 0.8333,
    human_open_rate: 0.8333,
  });
  // 1/6 vs 5/6, pooled 1/2: z = (1/6 - 5/6) / sqrt(0.25 · (2/6)) = -2.3094, p = 0.0209 (python3: math.erfc(2.3094/math.sqrt(2))).
  t.match(r.significance, { metric: 'open', z: -2.3094, p_value: 0.0209, significant: true, leader: 'b', more_per_variant: 0 });
  t.match(r.recommendation, /^Variant b wins: its open rate \(83\.3 %\) is higher than variant a's \(16\.7 %\)/);
  t.same([r.winner, r.winner_declared_at], [null, null]);

  const res = await finalize(c.id, 'b');
  t.equal(res.status, 200);
  t.match(res.body.data, {
    campaign_id: c.id,
    winner: 'b',
    winner_declared_at: clock.now().toISOString(),
    released: 8,
    recommendation: /^Variant b was declared the winner/,
  });
  const again = await finalize(c.id, 'a');
  t.same([again.status, again.body.error], [409, 'conflict'], 'a second finalize');
  t.match(again.body.message, /finalized already: variant b won/);
  t.equal((await readCampaign(s, a.tenant.token, c.id)).waiting_reason, null, 'no longer waiting for the winner');
  const [held] = await sql<{ n: number }[]>`select count(*)::int as n from campaign_recipients where campaign_id = ${c.id} and status = 'held'`;
  t.same(held, { n: 3 }, 'finalize released one batch (5) in its transaction; the fan-out releases the rest');

  t.equal(await drain(s, c.id), 'completed');
  const view = await readCampaign(s, a.tenant.token, c.id);
  t.equal(view.status, 'sent');
  const subjects = await sql<{ subject: string; v: string | null; n: number }[]>`
    select subject, campaign_variant as v, count(*)::int as n from sends where campaign_id = ${c.id} group by 1, 2 order by 1, 2`;
  t.same(
    subjects.map((x) => [x.subject, x.v, x.n]),
    [
      ['Subject A', 'a', 6],
      ['Subject B', 'b', 6],
      ['Subject B', null, 8],
    ],
    "the remainder got the winner's subject",
  );
  const perRecipient = await sendsPerRecipient(sql, c.id);
  t.same([perRecipient.size, [...perRecipient.values()].every((n) => n === 1)], [20, true], 'everyone exactly once');
  t.equal((await finalize(c.id, 'b')).status, 409, 'finalize after the send: still 409');

  const audits = await sql<
    { metadata: Record<string, unknown> }[]
  >`select metadata from audit_events where resource_id = ${c.id} and action = 'campaign.ab_finalized'`;
  t.equal(audits.length, 1, 'one audit row');
  t.match(audits[0]!.metadata, { winner: 'b', released: 8, from: 'sending', to: 'sending' });

  const stats = (await call(app, 'GET', `/campaigns/${c.id}/stats`, { token: a.tenant.token })).body.data;
  t.match(
    stats,
    { sent: 20, delivered: 12, unique_opens: 7, unique_human_opens: 6, total_opens: 8 },
    "the campaign's stats sum the variants and the remainder",
  );
});

t.test('finalize refusals: bad winner 422, an unknown field 400, cancelled 409, a paused campaign keeps the remainder until resumed', async (t) => {
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, subject: 'A', subject_b: 'B', ab_split_pct: 20 });
  for (const winner of ['c', null, 1]) t.equal((await finalize(c.id, winner)).status, 422, `winner ${JSON.stringify(winner)}`);
  const extra = await call(app, 'POST', `/campaigns/${c.id}/ab/finalize`, { token: a.tenant.token, body: { winner: 'a', force: true } });
  t.same([extra.status, extra.body.error], [400, 'bad_request']);

  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'waiting');
  t.equal((await call(app, 'POST', `/campaigns/${c.id}/pause`, { token: a.tenant.token })).status, 200);
  const res = await finalize(c.id, 'a');
  t.match(res.body.data, { winner: 'a', released: 16 });
  t.equal(await drain(s, c.id), 'nothing', 'paused: nothing is sent');
  t.equal((await call(app, 'POST', `/campaigns/${c.id}/resume`, { token: a.tenant.token })).status, 200);
  t.equal(await drain(s, c.id), 'completed');
  t.equal((await sendsPerRecipient(sql, c.id)).size, 20);

  const cancelled = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, subject: 'A', subject_b: 'B', ab_split_pct: 20 });
  await sendNow(s, a.tenant.token, cancelled.id);
  t.equal(await drain(s, cancelled.id), 'waiting');
  t.equal((await call(app, 'POST', `/campaigns/${cancelled.id}/cancel`, { token: a.tenant.token })).status, 200);
  const refused = await finalize(cancelled.id, 'a');
  t.same([refused.status, refused.body.error], [409, 'conflict']);
  t.match(refused.body.message, /cancelled/);

  const writer = await createKey(app, a.tenant, { scopes: ['campaigns:write'] });
  const other = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, subject: 'A', subject_b: 'B', ab_split_pct: 20 });
  t.equal((await finalize(other.id, 'a', writer.key)).status, 409, 'campaigns:write may finalize (a draft: 409, not 403)');
});
