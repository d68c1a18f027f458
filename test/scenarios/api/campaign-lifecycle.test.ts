// Campaign status changes through the API: every action from every status (the transition table), what refuses a send or a schedule, and Idempotency-Key on
// POST /send.
import t from 'tap';
import { CAMPAIGN_STATUSES } from '../../../shared/campaigns/statuses.js';
import { FANOUT_JOBS } from '../../../shared/campaigns/fanout-jobs.js';
import { call, registerTenant } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, listOf, sender } from '../../helpers/campaigns.js';

const s = await campaignApp(t);
const { sql } = s;
const a = await sender(s);
const token = a.tenant.token;
const { listId } = await listOf(sql, a.tenant.tenantId, addresses('lc', 2));
const future = () => new Date(Date.now() + 3_600_000).toISOString();

type Action = { name: string; method: 'GET' | 'POST' | 'PATCH' | 'DELETE'; path: string; body?: () => unknown; ok: number; from: string[]; to: string | null };

/** The transition table as the API shows it: the statuses each action is allowed from, its answer, and the status after. */
const ACTIONS: Action[] = [
  { name: 'edit', method: 'PATCH', path: '', body: () => ({ name: 'Edited' }), ok: 200, from: ['draft', 'scheduled'], to: null },
  { name: 'md5-list', method: 'PATCH', path: '/md5-list', body: () => ({ list_id: null }), ok: 200, from: ['draft', 'scheduled'], to: null },
  { name: 'delete', method: 'DELETE', path: '', ok: 200, from: ['draft'], to: 'deleted' },
  { name: 'schedule', method: 'POST', path: '/schedule', body: () => ({ scheduled_at: future() }), ok: 200, from: ['draft'], to: 'scheduled' },
  { name: 'unschedule', method: 'DELETE', path: '/schedule', ok: 200, from: ['scheduled'], to: 'draft' },
  { name: 'send', method: 'POST', path: '/send', ok: 202, from: ['draft', 'scheduled'], to: 'sending' },
  { name: 'pause', method: 'POST', path: '/pause', ok: 200, from: ['sending'], to: 'paused' },
  { name: 'resume', method: 'POST', path: '/resume', ok: 200, from: ['paused'], to: 'sending' },
  { name: 'cancel', method: 'POST', path: '/cancel', ok: 200, from: ['draft', 'scheduled', 'sending', 'paused'], to: 'cancelled' },
  { name: 'duplicate', method: 'POST', path: '/duplicate', ok: 201, from: [...CAMPAIGN_STATUSES], to: null },
];

t.test('every action from every status: allowed ones lead where the table says, the others are 409 and change nothing', async (t) => {
  for (const status of CAMPAIGN_STATUSES) {
    for (const action of ACTIONS) {
      const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
      await sql`update campaigns set status = ${status}, scheduled_at = ${status === 'scheduled' ? new Date(Date.now() + 3_600_000) : null} where id = ${c.id}`;
      const res = await call(s.app, action.method, `/campaigns/${c.id}${action.path}`, { token, ...(action.body ? { body: action.body() } : {}) });
      const [row] = await sql<{ status: string }[]>`select status from campaigns where id = ${c.id}`;
      const label = `${action.name} from ${status}`;
      if (action.from.includes(status)) {
        t.equal(res.status, action.ok, `${label}: ${res.status} ${res.body.message ?? ''}`);
        t.equal(row?.status ?? 'deleted', action.to ?? status, `${label} → ${action.to ?? status}`);
      } else {
        t.same([res.status, res.body.error], [409, 'conflict'], label);
        t.match(res.body.message, new RegExp(`that is ${status}`), `${label}: says why`);
        t.equal(row!.status, status, `${label}: unchanged`);
      }
    }
  }
});

t.test('the status changes are audited and say where from and to', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  await call(s.app, 'POST', `/campaigns/${c.id}/schedule`, { token, body: { scheduled_at: future() } });
  await call(s.app, 'DELETE', `/campaigns/${c.id}/schedule`, { token });
  await call(s.app, 'POST', `/campaigns/${c.id}/send`, { token });
  await call(s.app, 'POST', `/campaigns/${c.id}/pause`, { token });
  await call(s.app, 'POST', `/campaigns/${c.id}/resume`, { token });
  await call(s.app, 'POST', `/campaigns/${c.id}/cancel`, { token });
  const rows = await sql<{ action: string; metadata: { from: string; to: string } }[]>`
    select action, metadata from audit_events where resource_id = ${c.id} and action <> 'campaign.created' order by id`;
  t.same(
    rows.map((r) => `${r.action} ${r.metadata.from}→${r.metadata.to}`),
    [
      'campaign.scheduled draft→scheduled',
      'campaign.unscheduled scheduled→draft',
      'campaign.send_started draft→sending',
      'campaign.paused sending→paused',
      'campaign.resumed paused→sending',
      'campaign.cancelled sending→cancelled',
    ],
  );
});

t.test('send: 202 {campaign_id, status}, the fan-out queued; what is not sendable is refused before anything changes', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  const res = await call(s.app, 'POST', `/campaigns/${c.id}/send`, { token });
  t.match([res.status, res.body.data], [202, { campaign_id: c.id, status: 'sending', forecast: { mode: 'live', recipients: Number } }]);
  const [jobs] = await sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${c.id}`;
  t.equal(jobs!.n, 2, 'one job per parallel slot');
  const view = (await call(s.app, 'GET', `/campaigns/${c.id}`, { token })).body.data;
  t.ok(view.started_at);
  t.equal(view.send_mode, 'live');

  const unverifiedDomain = `unverified-${Date.now()}.example`;
  const unverified = `news@${unverifiedDomain}`;
  await sql`insert into domains (tenant_id, name, unicode_name, created_at) values (${a.tenant.tenantId}, ${unverifiedDomain}, ${unverifiedDomain}, now())`;
  const deletedList = (await listOf(sql, a.tenant.tenantId, ['d@example.test'])).listId;
  const cases: [Record<string, unknown>, number, RegExp, (() => Promise<unknown>)?][] = [
    // No from_email: the tenant's default sender (test/scenarios/campaigns/default-sender.test.ts).
    [{ from_email: 'news@elsewhere.example' }, 422, /^from_email: its domain elsewhere\.example is not a verified sending domain/],
    [{ from_email: unverified }, 422, /^from_email: .* is not a verified sending domain/],
    [{ subject: null }, 422, /^subject: is required to send/],
    [{ body_text: null }, 422, /^body_html: a campaign needs body_html, body_text or both/],
    [{ ab_split_pct: 10 }, 422, /^subject_b: is required to send an A\/B test/],
    [{ list_id: deletedList }, 422, /^list_id: the campaign has no target/, () => sql`delete from lists where id = ${deletedList}`],
  ];
  for (const [fields, status, message, after] of cases) {
    const bad = await createCampaign(s, token, { list_id: listId, from_email: a.from, ...fields });
    if (after) await after();
    const r = await call(s.app, 'POST', `/campaigns/${bad.id}/send`, { token });
    t.same([r.status, r.body.error], [status, 'validation_error'], JSON.stringify(fields));
    t.match(r.body.message, message, r.body.message);
    const [row] = await sql<{ status: string }[]>`select status from campaigns where id = ${bad.id}`;
    t.equal(row!.status, 'draft', 'still a draft');
    // Scheduling checks the same.
    const sch = await call(s.app, 'POST', `/campaigns/${bad.id}/schedule`, { token, body: { scheduled_at: future() } });
    t.equal(sch.status, status, `schedule too: ${JSON.stringify(fields)}`);
  }

  const bare = await registerTenant(s.app);
  const bareList = (await listOf(sql, bare.tenantId, ['b@example.test'])).listId;
  const noDomain = await createCampaign(s, bare.token, { list_id: bareList, from_email: 'news@nowhere.example' });
  const r = await call(s.app, 'POST', `/campaigns/${noDomain.id}/send`, { token: bare.token });
  t.same([r.status, r.body.error], [412, 'no_verified_domain'], 'a tenant without a verified domain: 412');
});

t.test('schedule: scheduled_at must be a timestamp in the future; the campaign shows it', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  for (const [value, message] of [
    [new Date(Date.now() - 1000).toISOString(), /^scheduled_at: must be in the future/],
    ['tomorrow', /^scheduled_at: must be an RFC 3339 timestamp/],
    ['2026-13-01T00:00:00Z', /^scheduled_at: must be an RFC 3339 timestamp/],
  ] as const) {
    const res = await call(s.app, 'POST', `/campaigns/${c.id}/schedule`, { token, body: { scheduled_at: value } });
    t.same([res.status, res.body.error], [422, 'validation_error'], value);
    t.match(res.body.message, message);
  }
  t.equal((await call(s.app, 'POST', `/campaigns/${c.id}/schedule`, { token, body: {} })).status, 422);
  const at = new Date(Date.now() + 7_200_000);
  const res = await call(s.app, 'POST', `/campaigns/${c.id}/schedule`, { token, body: { scheduled_at: at.toISOString().replace('Z', '+00:00') } });
  t.same([res.status, res.body.data.status, res.body.data.scheduled_at], [200, 'scheduled', at.toISOString()]);
  const un = await call(s.app, 'DELETE', `/campaigns/${c.id}/schedule`, { token });
  t.same([un.status, un.body.data], [200, { status: 'draft' }]);
  t.equal((await call(s.app, 'GET', `/campaigns/${c.id}`, { token })).body.data.scheduled_at, null);
});

t.test('Idempotency-Key on send: a repeat answers the first answer (replayed) and starts nothing; another campaign with the key is 409', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  const send = (id: string, key: string) => call(s.app, 'POST', `/campaigns/${id}/send`, { token, headers: { 'idempotency-key': key } });
  const first = await send(c.id, 'launch-1');
  t.match([first.status, first.body.data], [202, { campaign_id: c.id, status: 'sending', forecast: { mode: 'live' } }]);
  t.equal(first.headers['idempotent-replayed'], undefined);
  const again = await send(c.id, 'launch-1');
  t.same([again.status, again.body.data], [202, first.body.data], 'not a 409: the same answer, its forecast included');
  t.equal(again.headers['idempotent-replayed'], 'true');
  const audits = await sql<{ n: number }[]>`select count(*)::int as n from audit_events where resource_id = ${c.id} and action = 'campaign.send_started'`;
  t.equal(audits[0]!.n, 1, 'started once');
  t.equal((await call(s.app, 'POST', `/campaigns/${c.id}/send`, { token })).status, 409, 'without the key, a second send is 409');

  const d = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  const clash = await send(d.id, 'launch-1');
  t.same([clash.status, clash.body.error], [409, 'conflict']);
  t.match(clash.body.message, /another campaign/);
  const [row] = await sql<{ status: string }[]>`select status from campaigns where id = ${d.id}`;
  t.equal(row!.status, 'draft');

  // A refused send does not hold its key: fixed, the retry goes through.
  const e = await createCampaign(s, token, { list_id: listId, from_email: a.from, subject: null });
  t.equal((await send(e.id, 'launch-2')).status, 422);
  await call(s.app, 'PATCH', `/campaigns/${e.id}`, { token, body: { subject: 'Hello' } });
  t.equal((await send(e.id, 'launch-2')).status, 202);
  // Keys of the transactional endpoint are apart.
  t.equal((await send(d.id, 'shared-key')).status, 202);
  const tx = await call(s.app, 'POST', '/transactional/send', {
    token,
    headers: { 'idempotency-key': 'shared-key' },
    body: { to: 'x@example.test', from_email: a.from, subject: 'S', body_text: 'B' },
  });
  t.equal(tx.status, 202);
  const bad = await send(c.id, 'has space');
  t.same([bad.status, bad.body.error], [422, 'validation_error']);
});

t.test('send: every answer carries the X-Quota-* headers of this month, as POST /transactional/send does', async (t) => {
  const b = await sender(s);
  const list = (await listOf(sql, b.tenant.tenantId, addresses('quota', 2))).listId;
  await sql`insert into tenant_monthly_usage (tenant_id, month, sent)
            values (${b.tenant.tenantId}, date_trunc('month', now() at time zone 'utc')::date, 850000)`;
  const quota = (res: { headers: Record<string, unknown> }) =>
    ['x-quota-used', 'x-quota-cap', 'x-quota-remaining', 'x-quota-warning'].map((h) => res.headers[h]);
  const expected = ['850000', '1000000', '150000', '1'];
  const send = (id: string, headers: Record<string, string> = {}) => call(s.app, 'POST', `/campaigns/${id}/send`, { token: b.tenant.token, headers });

  const c = await createCampaign(s, b.tenant.token, { list_id: list, from_email: b.from });
  const started = await send(c.id, { 'idempotency-key': 'quota-1' });
  t.equal(started.status, 202);
  t.same(quota(started), expected, '202: used, cap, remaining and the warning from 80 %');
  const replayed = await send(c.id, { 'idempotency-key': 'quota-1' });
  t.same([replayed.headers['idempotent-replayed'], ...quota(replayed)], ['true', ...expected], 'a replayed answer too');
  const again = await send(c.id);
  t.same([again.status, ...quota(again)], [409, ...expected], 'a refused send (409) too');
  const unsendable = await createCampaign(s, b.tenant.token, { list_id: list, from_email: b.from, subject: null });
  const refused = await send(unsendable.id);
  t.same([refused.status, ...quota(refused)], [422, ...expected], 'a campaign that cannot be sent (422) too');
  const unknown = await send('00000000-0000-4000-8000-000000000000');
  t.same([unknown.status, ...quota(unknown)], [404, ...expected], 'an unknown campaign (404) too');
});

t.test('send at or over the monthly cap: 402 quota_exceeded with the X-Quota-* headers, and nothing starts', async (t) => {
  const b = await sender(s);
  const list = (await listOf(sql, b.tenant.tenantId, addresses('capped', 2))).listId;
  await sql`insert into tenant_monthly_usage (tenant_id, month, sent)
            values (${b.tenant.tenantId}, date_trunc('month', now() at time zone 'utc')::date, 1000000)`;
  const c = await createCampaign(s, b.tenant.token, { list_id: list, from_email: b.from });
  const res = await call(s.app, 'POST', `/campaigns/${c.id}/send`, { token: b.tenant.token });
  t.same([res.status, res.body.error], [402, 'quota_exceeded']);
  t.match(res.body.message, /monthly send cap of 1000000 is reached/);
  t.same(
    ['x-quota-used', 'x-quota-cap', 'x-quota-remaining'].map((h) => res.headers[h]),
    ['1000000', '1000000', '0'],
  );
  t.equal((await call(s.app, 'GET', `/campaigns/${c.id}`, { token: b.tenant.token })).body.data.status, 'draft', 'the campaign is still a draft');
});
