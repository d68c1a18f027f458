// The send forecast: the day plan under warm-up caps, the quota and a paused domain; GET /campaigns/{id}/forecast and the send answer's forecast, before,
// during and after the fan-out; isolation and scope.
import t from 'tap';
import { planDays } from '../../../shared/campaigns/forecast.js';
import { call, createKey } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, sender } from '../../helpers/campaigns.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

const at = new Date('2026-11-21T15:00:00Z');
const base = { at, remaining: 0, dailyCap: 500, sentToday: 0, domainPaused: false, quotaCap: 1_000_000, quotaUsed: 0 };

t.test('planDays: the warm-up cap spreads the rest over the next UTC days', async (t) => {
  const plan = planDays({ ...base, remaining: 2000, sentToday: 100 });
  t.equal(plan.today, 400, 'today: the cap less what the domain sent already');
  t.equal(plan.limitedBy, 'warmup');
  t.same(plan.days, [
    { date: '2026-11-21', sends: 400 },
    { date: '2026-11-22', sends: 500 },
    { date: '2026-11-23', sends: 500 },
    { date: '2026-11-24', sends: 500 },
    { date: '2026-11-25', sends: 100 },
  ]);
  t.same(plan.restStartsAt, new Date('2026-11-22T00:00:00Z'));
  t.equal(plan.completesOn, '2026-11-25');

  const fits = planDays({ ...base, remaining: 300 });
  t.match(fits, { today: 300, limitedBy: null, restStartsAt: null, completesOn: '2026-11-21' }, 'all of it today');
  t.match(planDays({ ...base, remaining: 0 }), { today: 0, limitedBy: null, days: [], completesOn: '2026-11-21' }, 'nothing left');
});

t.test('planDays: the quota holds the rest to the next months; a paused domain promises nothing', async (t) => {
  const endOfMonth = new Date('2026-11-30T10:00:00Z');
  const plan = planDays({ ...base, at: endOfMonth, remaining: 3000, dailyCap: 5000, quotaCap: 1000, quotaUsed: 900 });
  t.equal(plan.today, 100);
  t.equal(plan.limitedBy, 'quota');
  t.same(
    plan.days,
    [
      { date: '2026-11-30', sends: 100 },
      { date: '2026-12-01', sends: 1000 },
      { date: '2027-01-01', sends: 1000 },
      { date: '2027-02-01', sends: 900 },
    ],
    "each month's quota from its first day",
  );
  t.same(plan.restStartsAt, new Date('2026-12-01T00:00:00Z'));
  t.equal(plan.completesOn, '2027-02-01');

  t.match(planDays({ ...base, remaining: 10, domainPaused: true }), { today: 0, limitedBy: 'domain_paused', days: [], restStartsAt: null, completesOn: null });
  const endless = planDays({ ...base, remaining: 1_000_000_000, dailyCap: 50 });
  t.equal(endless.completesOn, null, 'beyond ten years: no completion day');
  t.equal(endless.days.length, 31, 'the first 31 sending days listed');
});

t.test('GET /campaigns/{id}/forecast and the send answer: today under the tier cap, the rest on the next days', async (t) => {
  const s = await campaignApp(t, { env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[50, 100, 250]' } });
  const { tenant, domain } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, addresses('fc', 120));
  const c = await createCampaign(s, tenant.token, { list_id: listId });

  const before = await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: tenant.token });
  t.equal(before.status, 200);
  t.match(before.body.data, {
    mode: 'live',
    recipients: 120,
    remaining: 120,
    today: 50,
    limited_by: 'warmup',
    warmup: { domain: domain.name, tier: 0, daily_cap: 50, sent_today: 0, paused: false },
    quota: { monthly_cap: 1_000_000, used: 0, resets_at: String },
    completes_on: String,
    rest_starts_at: String,
  });
  t.same(
    before.body.data.days.map((d: { sends: number }) => d.sends),
    [50, 50, 20],
  );

  const sent = await call(s.app, 'POST', `/campaigns/${c.id}/send`, { token: tenant.token });
  t.equal(sent.status, 202);
  t.same(sent.body.data.forecast, before.body.data, 'the send answer carries the same forecast');

  await drain(s, c.id);
  const during = (await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: tenant.token })).body.data;
  t.match(during, { recipients: 120, remaining: 70, today: 0, limited_by: 'warmup', warmup: { sent_today: 50 } }, "what is left, after today's 50");
  t.same(
    during.days.map((d: { sends: number }) => d.sends),
    [50, 20],
    'from tomorrow',
  );
  t.equal(new Date(during.rest_starts_at).getUTCHours(), 0, 'the rest starts at 00:00 UTC');

  await s.sql`update domain_warmup set tier = 2 where domain_id = ${domain.id}`;
  const raised = (await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: tenant.token })).body.data;
  t.match(raised, { today: 70, limited_by: null, warmup: { tier: 2, daily_cap: 250 }, rest_starts_at: null }, 'a higher tier: the rest goes today');
});

t.test('a test key forecasts a simulated send; a key without campaigns:read gets 403; another tenant gets 404', async (t) => {
  const s = await campaignApp(t, { env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[50]' } });
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, addresses('tk', 80));
  const c = await createCampaign(s, tenant.token, { list_id: listId });
  const testKey = await createKey(s.app, tenant, { name: 'test', mode: 'test' });
  const simulated = await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: testKey.key });
  t.match(simulated.body.data, { mode: 'test', recipients: 80, today: 80, limited_by: null, warmup: null });

  const narrow = await createKey(s.app, tenant, { name: 'lists only', scopes: ['lists:read'] });
  const refused = await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: narrow.key });
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'invalid_scope');
  const reader = await createKey(s.app, tenant, { name: 'reader', scopes: ['campaigns:read'] });
  t.equal((await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: reader.key })).status, 200, 'campaigns:read is enough');

  const { other } = await twoTenants(s.app);
  await assertForeign404(t, s.app, other.token, [{ method: 'GET', url: `/campaigns/${c.id}/forecast` }]);
});

t.test("a segment target is counted within the tenant's query slots", async (t) => {
  const s = await campaignApp(t);
  const { tenant } = await sender(s);
  const { listId } = await listOf(s.sql, tenant.tenantId, addresses('sg', 30));
  const seg = await call(s.app, 'POST', '/segments', {
    token: tenant.token,
    body: { name: 'On the list', definition: { op: 'AND', rules: [{ type: 'list', operator: 'in', list_id: listId }] } },
  });
  t.equal(seg.status, 201, JSON.stringify(seg.body));
  const c = await createCampaign(s, tenant.token, { segment_id: seg.body.data.id });
  const forecast = (await call(s.app, 'GET', `/campaigns/${c.id}/forecast`, { token: tenant.token })).body.data;
  t.match(forecast, { recipients: 30, today: 30, limited_by: null });
});
