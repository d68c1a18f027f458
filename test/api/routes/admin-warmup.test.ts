// Super-admin warm-up over HTTP: auth and isolation of every route, overrides (advance, demote, hold, pause, resume) audited, auto-ramp run-now, per-ESP
// sub-caps advisory and enforced with the reconciliation report.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);

async function setup(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}) {
  const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
  const built = await buildTestApp(t, { clock, env: { MAILPATH_DNS_SERVERS: dns.address, ...env } });
  const admin = await superAdminToken(built.app);
  const tenant = await registerTenant(built.app);
  const { key } = await createKey(built.app, tenant, { scopes: ['transactional:send'] });
  const domain = await verifiedSendingDomain(built.sql, built.ctx.vault, tenant.tenantId);
  const send = (to: string) =>
    call(built.app, 'POST', '/transactional/send', { token: key, body: { to, from_email: `hello@${domain.name}`, subject: 'Hi', body_text: 'Hello' } });
  return { ...built, clock, admin, tenant, domain, send };
}

const ROUTES = (tenantId: string, domainId: string): [string, string, unknown?][] => [
  ['POST', '/admin/warmup/auto-ramp/run-now'],
  ['GET', `/admin/tenants/${tenantId}/warmup`],
  ['POST', `/admin/tenants/${tenantId}/warmup/domains/${domainId}/advance`],
  ['POST', `/admin/tenants/${tenantId}/warmup/domains/${domainId}/demote`],
  ['POST', `/admin/tenants/${tenantId}/warmup/domains/${domainId}/hold`, { days: 1 }],
  ['POST', `/admin/tenants/${tenantId}/warmup/domains/${domainId}/pause`],
  ['POST', `/admin/tenants/${tenantId}/warmup/domains/${domainId}/resume`],
  ['GET', `/admin/tenants/${tenantId}/warmup/esp-caps`],
  ['PUT', `/admin/tenants/${tenantId}/warmup/esp-caps/gmail`, { daily_limit: 5 }],
  ['GET', `/admin/tenants/${tenantId}/warmup/reconciliation`],
  ['GET', `/admin/tenants/${tenantId}/warmup-schedule`],
  ['POST', `/admin/tenants/${tenantId}/warmup-schedule/generate`, { strategy: 'standard', total_target_recipients: 10 }],
  ['PATCH', `/admin/tenants/${tenantId}/warmup-schedule/0`, { notes: 'x' }],
  ['POST', `/admin/tenants/${tenantId}/warmup-schedule/dispatch-now`],
];

t.test('every route is super-admin only: 401 without a credential, 403 for a tenant owner', async (t) => {
  const s = await setup(t);
  for (const [method, url, body] of ROUTES(s.tenant.tenantId, s.domain.id)) {
    t.equal((await call(s.app, method as 'GET', url, { body })).status, 401, `${method} ${url} without a token`);
    t.equal((await call(s.app, method as 'GET', url, { token: s.tenant.token, body })).status, 403, `${method} ${url} as a tenant`);
  }
  const doc = await call(s.app, 'GET', '/openapi.json');
  for (const [method, url] of ROUTES('{id}', '{domain_id}')) {
    const path = url.replace('/warmup-schedule/0', '/warmup-schedule/{day_offset}').replace('/esp-caps/gmail', '/esp-caps/{provider}');
    const op = doc.body.paths[path]?.[method.toLowerCase()];
    t.ok(op?.description, `${method} ${path} is documented`);
  }
});

t.test('overrides: advance, demote, hold, pause, resume; each audited and recorded; impossible moves 409; foreign domains 404', async (t) => {
  const s = await setup(t);
  const base = `/admin/tenants/${s.tenant.tenantId}/warmup/domains/${s.domain.id}`;
  // The reason is optional, the JSON object body is not (house rule for routes that take a body): {} will do.
  const post = (action: string, body: unknown = {}) => call(s.app, 'POST', `${base}/${action}`, { token: s.admin, body });

  const demoteAt0 = await post('demote');
  t.equal(demoteAt0.status, 409, JSON.stringify(demoteAt0.body));
  t.equal(demoteAt0.body.error, 'conflict');
  const adv = await post('advance', { reason: 'known sender, migrating from another ESP' });
  t.equal(adv.status, 200);
  t.match(adv.body.data, {
    tier: 1,
    daily_cap: 100,
    paused: false,
    move: { source: 'override', action: 'advance', from_tier: 0, to_tier: 1, reason: 'known sender, migrating from another ESP' },
  });
  t.match((await post('demote')).body.data, { tier: 0, move: { action: 'demote', from_tier: 1, to_tier: 0 } });
  const hold = await post('hold', { days: 3 });
  t.equal(hold.status, 200);
  t.equal(hold.body.data.held_until, '2026-11-28T10:00:00.000Z');
  t.equal((await post('hold', { days: 91 })).status, 422);
  t.equal((await post('hold')).status, 422, 'hold needs days');
  t.match((await post('pause', { reason: 'spam trap hits' })).body.data, { paused: true, move: { action: 'pause' } });
  t.equal((await post('pause')).status, 409, 'already paused');
  // A paused domain's sends are deferred, not refused.
  const deferred = await s.send('someone@dest.example');
  t.equal(deferred.status, 202);
  t.equal(deferred.body.data.status, 'deferred');
  const [row] = await s.sql`select status_detail from sends where id = ${deferred.body.data.message_id}`;
  t.match(row!['status_detail'], /paused/);
  t.match((await post('resume')).body.data, { paused: false, move: { action: 'resume' } });
  t.equal((await post('resume')).status, 409, 'not paused');
  t.equal((await post('advance', { surprise: 1 })).status, 400, 'unexpected field');

  const audits = await s.sql`select action, actor_type, tenant_id, resource_id, metadata from audit_events where action like 'warmup.%' order by id`;
  t.same(
    audits.map((a) => a['action']),
    ['warmup.advance', 'warmup.demote', 'warmup.hold', 'warmup.pause', 'warmup.resume'],
  );
  t.match(audits[0], { actor_type: 'user', tenant_id: s.tenant.tenantId, resource_id: s.domain.id, metadata: { from_tier: 0, to_tier: 1 } });

  const view = await call(s.app, 'GET', `/admin/tenants/${s.tenant.tenantId}/warmup`, { token: s.admin });
  t.equal(view.status, 200);
  t.match(view.body.data.domains, [{ domain_id: s.domain.id, tier: 0, daily_cap: 50, paused: false, held_until: '2026-11-28T10:00:00.000Z', verified: true }]);
  t.same(
    view.body.data.moves.map((m: { action: string }) => m.action),
    ['resume', 'pause', 'freeze', 'demote', 'advance'],
    'newest first',
  );

  // Isolation: another tenant's domain under this tenant's id, unknown tenants and ids are 404.
  const other = await registerTenant(s.app);
  const foreign = await verifiedSendingDomain(s.sql, s.ctx.vault, other.tenantId);
  const wrong = await call(s.app, 'POST', `/admin/tenants/${s.tenant.tenantId}/warmup/domains/${foreign.id}/advance`, { token: s.admin, body: {} });
  t.equal(wrong.status, 404);
  t.equal(wrong.body.error, 'not_found');
  t.equal((await call(s.app, 'GET', '/admin/tenants/00000000-0000-4000-8000-000000000000/warmup', { token: s.admin })).status, 404);
  t.equal((await call(s.app, 'GET', '/admin/tenants/nope/warmup/reconciliation', { token: s.admin })).status, 404);
  t.equal((await call(s.app, 'POST', `/admin/tenants/${s.tenant.tenantId}/warmup/domains/nope/pause`, { token: s.admin, body: {} })).status, 404);
});

t.test(
  "auto-ramp run-now: {elapsed_ms, triggered}, recorded as the worker's tick (02:00 UTC schedule) and audited; a same-day re-run moves nothing",
  async (t) => {
    const s = await setup(t);
    const run = await call(s.app, 'POST', '/admin/warmup/auto-ramp/run-now', { token: s.admin });
    t.equal(run.status, 200);
    t.match(run.body.data, { elapsed_ms: Number, triggered: true, result: { domains: 1, hold: 1, already_done: 0 } });
    const again = await call(s.app, 'POST', '/admin/warmup/auto-ramp/run-now', { token: s.admin });
    t.match(again.body.data.result, { domains: 1, hold: 0, already_done: 1 });
    const workers = await call(s.app, 'GET', '/admin/workers', { token: s.admin });
    const ramp = workers.body.data.items.find((w: { name: string }) => w.name === 'warmup-auto-ramp');
    t.match(ramp, { last_tick_outcome: 'ok', interval_minutes: 1440, next_tick_estimate: '2026-11-26T02:00:00.000Z' });
    const audits = await s.sql`select action from audit_events where action = 'warmup.auto_ramp_run_now'`;
    t.equal(audits.length, 2);
  },
);

t.test('per-ESP sub-caps advisory (default): over-cap sends go out and are counted as would-have-throttled', async (t) => {
  const s = await setup(t);
  const put = await call(s.app, 'PUT', `/admin/tenants/${s.tenant.tenantId}/warmup/esp-caps/gmail`, { token: s.admin, body: { daily_limit: 2 } });
  t.same(put.body.data, { tenant_id: s.tenant.tenantId, provider: 'gmail', daily_limit: 2 });
  t.equal(
    (await call(s.app, 'PUT', `/admin/tenants/${s.tenant.tenantId}/warmup/esp-caps/hotmail`, { token: s.admin, body: { daily_limit: 2 } })).status,
    422,
    'unknown provider',
  );
  for (const to of ['a@gmail.com', 'b@googlemail.com', 'c@gmail.com', 'd@yahoo.com']) {
    const r = await s.send(to);
    t.equal(r.body.data.status, 'queued', `${to} goes out`);
  }
  const rec = await call(s.app, 'GET', `/admin/tenants/${s.tenant.tenantId}/warmup/reconciliation`, { token: s.admin });
  t.equal(rec.status, 200);
  t.equal(rec.body.data.enforce, false);
  t.same(rec.body.data.items, [
    {
      domain_id: s.domain.id,
      domain: s.domain.name,
      provider: 'gmail',
      tier: 0,
      per_domain_limit: 50,
      per_esp_limit: 2,
      effective_cap: 2,
      sent_24h: 3,
      would_have_throttled_count: 1,
      deferred_count: 0,
    },
    {
      domain_id: s.domain.id,
      domain: s.domain.name,
      provider: 'yahoo',
      tier: 0,
      per_domain_limit: 50,
      per_esp_limit: null,
      effective_cap: 50,
      sent_24h: 1,
      would_have_throttled_count: 0,
      deferred_count: 0,
    },
  ]);
  const [third] = await s.sql`select gate_decisions from sends where to_email = 'c@gmail.com'`;
  t.match(
    third!['gate_decisions'].find((d: { gate: string }) => d.gate === 'per_esp'),
    { gate: 'per_esp', outcome: 'continue', detail: { provider: 'gmail', would_have_throttled: true } },
    'the send records it',
  );
  const audits = await s.sql`select action from audit_events where action = 'warmup.esp_cap_set'`;
  t.equal(audits.length, 1);
});

t.test('per-ESP sub-caps enforced (WARMUP_PER_ESP_ENFORCE=true): over-cap sends are deferred to 00:00 UTC and take no warm-up allowance', async (t) => {
  const s = await setup(t, { WARMUP_PER_ESP_ENFORCE: 'true' });
  await call(s.app, 'PUT', `/admin/tenants/${s.tenant.tenantId}/warmup/esp-caps/gmail`, { token: s.admin, body: { daily_limit: 2 } });
  const statuses: string[] = [];
  for (const to of ['a@gmail.com', 'b@gmail.com', 'c@gmail.com', 'd@outlook.com']) statuses.push((await s.send(to)).body.data.status);
  t.same(statuses, ['queued', 'queued', 'deferred', 'queued']);
  const [deferred] = await s.sql`select defer_until, status_detail from sends where to_email = 'c@gmail.com'`;
  t.same(deferred!['defer_until'], new Date('2026-11-26T00:00:00Z'));
  t.match(deferred!['status_detail'], /per-ESP/);
  const [counter] = await s.sql`select sent from warmup_daily_counters where domain_id = ${s.domain.id}`;
  t.equal(counter!['sent'], 3, 'the deferred send took no warm-up allowance');
  const rec = await call(s.app, 'GET', `/admin/tenants/${s.tenant.tenantId}/warmup/reconciliation`, { token: s.admin });
  t.equal(rec.body.data.enforce, true);
  t.match(
    rec.body.data.items.find((i: { provider: string }) => i.provider === 'gmail'),
    { per_esp_limit: 2, effective_cap: 2, would_have_throttled_count: 1, deferred_count: 1 },
  );
  const caps = await call(s.app, 'GET', `/admin/tenants/${s.tenant.tenantId}/warmup/esp-caps`, { token: s.admin });
  t.same(caps.body.data, { tenant_id: s.tenant.tenantId, enforce: true, items: [{ provider: 'gmail', daily_limit: 2 }] });
});

t.test("advance and demote to a given tier: out of range 422, the wrong direction 409, audited; other tenants' domains 404", async (t) => {
  const s = await setup(t);
  const base = `/admin/tenants/${s.tenant.tenantId}/warmup/domains/${s.domain.id}`;
  const post = (action: string, body: unknown) => call(s.app, 'POST', `${base}/${action}`, { token: s.admin, body });
  for (const tier of [11, -1, 2.5, '5']) {
    const bad = await post('advance', { tier });
    t.equal(bad.status, 422, `tier ${JSON.stringify(tier)}: ${JSON.stringify(bad.body)}`);
    t.equal(bad.body.error, 'validation_error');
    t.match(bad.body.message, /tier/);
  }
  const up = await post('advance', { tier: 5, reason: 'warm elsewhere' });
  t.equal(up.status, 200, JSON.stringify(up.body));
  t.match(up.body.data, { tier: 5, daily_cap: 2500, move: { action: 'advance', from_tier: 0, to_tier: 5, reason: 'warm elsewhere' }, campaigns_woken: 0 });
  t.equal((await post('advance', { tier: 5 })).status, 409, 'not above the current tier');
  t.equal((await post('advance', { tier: 3 })).status, 409);
  t.equal((await post('demote', { tier: 7 })).status, 409, 'not below the current tier');
  t.match((await post('demote', { tier: 2 })).body.data, { tier: 2, daily_cap: 250, move: { action: 'demote', from_tier: 5, to_tier: 2 } });
  t.match((await post('advance', { tier: 10 })).body.data, { tier: 10, daily_cap: 100000 });
  t.equal((await post('advance', {})).status, 409, 'one step at the top is still 409');
  t.equal((await call(s.app, 'POST', `${base}/advance`, { token: s.tenant.token, body: { tier: 3 } })).status, 403, 'tenant owner');
  const audits = await s.sql`select action, metadata from audit_events where action like 'warmup.%' order by id`;
  t.same(
    audits.map((a) => [a['action'], a['metadata'].from_tier, a['metadata'].to_tier, a['metadata'].requested_tier]),
    [
      ['warmup.advance', 0, 5, 5],
      ['warmup.demote', 5, 2, 2],
      ['warmup.advance', 2, 10, 10],
    ],
  );

  // Isolation: another tenant's domain under this tenant's id is 404 and keeps its tier.
  const other = await registerTenant(s.app);
  const foreign = await verifiedSendingDomain(s.sql, s.ctx.vault, other.tenantId);
  const wrong = await call(s.app, 'POST', `/admin/tenants/${s.tenant.tenantId}/warmup/domains/${foreign.id}/advance`, { token: s.admin, body: { tier: 4 } });
  t.equal(wrong.status, 404);
  t.equal(wrong.body.error, 'not_found');
  const theirs = await call(s.app, 'GET', `/admin/tenants/${other.tenantId}/warmup`, { token: s.admin });
  t.match(theirs.body.data.domains, [{ domain_id: foreign.id, tier: 0 }]);
  const unknown = `/admin/tenants/00000000-0000-4000-8000-000000000000/warmup/domains/${s.domain.id}/advance`;
  t.equal((await call(s.app, 'POST', unknown, { token: s.admin, body: { tier: 1 } })).status, 404);
});
