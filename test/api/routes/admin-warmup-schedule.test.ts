// The warm-up schedule over HTTP: generation from both of the spec's field sets (overwriting), validation, row patches, and today's dispatch to the most
// engaged contacts, idempotent.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { dailyTargets, tierOfDay } from '../../../shared/deliverability/warmup/schedule.js';
import { buildTestApp, call, registerTenant, superAdminToken } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);
const clock = new ManualClock(new Date('2026-11-25T10:00:00Z'));
const { app, sql, ctx } = await buildTestApp(t, { clock, env: { MAILPATH_DNS_SERVERS: dns.address } });
const admin = await superAdminToken(app);
const CAPS = { tier_caps: [50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000] };

const schedulePath = (tenantId: string) => `/admin/tenants/${tenantId}/warmup-schedule`;
const generate = (tenantId: string, body: unknown) => call(app, 'POST', `${schedulePath(tenantId)}/generate`, { token: admin, body });

t.test('the curve: days 1-7 climb tiers 0-6, weeks 2-4 are tiers 7-9, then fully warm; targets stop at the total', async (t) => {
  t.same(
    Array.from({ length: 30 }, (_, d) => tierOfDay(d)),
    [0, 1, 2, 3, 4, 5, 6, 7, 7, 7, 7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, 9, 9, 10, 10],
  );
  t.same(dailyTargets(CAPS, 1, 1000).slice(0, 6), [50, 100, 250, 500, 100, 0]);
  t.equal(
    dailyTargets(CAPS, 1, 1000).reduce((a, b) => a + b),
    1000,
  );
  t.same(dailyTargets(CAPS, 0.5, 10_000_000).slice(0, 8), [25, 50, 125, 250, 500, 1250, 2500, 5000]);
  t.same(dailyTargets(CAPS, 1.5, 10_000_000).slice(0, 2), [75, 150]);
});

t.test('generate accepts both field sets, overwrites the plan, and refuses mixtures and out-of-range totals', async (t) => {
  const tenant = await registerTenant(app);
  const empty = await call(app, 'GET', schedulePath(tenant.tenantId), { token: admin });
  t.same(empty.body.data, { tenant_id: tenant.tenantId, plan: null, items: [] });

  const formal = await generate(tenant.tenantId, { strategy: 'gentle', total_target_recipients: 400 });
  t.equal(formal.status, 200, JSON.stringify(formal.body));
  t.match(formal.body.data.plan, { strategy: 'gentle', field_set: 'formal', total_target_recipients: 400, start_date: '2026-11-25', domain_id: null });
  t.equal(formal.body.data.items.length, 30);
  t.same(
    formal.body.data.items.slice(0, 5).map((r: { daily_target_recipients: number }) => r.daily_target_recipients),
    [25, 50, 125, 200, 0],
  );
  t.match(formal.body.data.items[29], { day_offset: 29, date: '2026-12-24', send_status: 'pending', template_slug: null });

  await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/3`, { token: admin, body: { notes: 'old plan' } });
  const narrative = await generate(tenant.tenantId, { start_date: '2026-12-01', total_target_recipients: 10_000_000, ramp_strategy: 'aggressive' });
  t.equal(narrative.status, 200);
  t.match(narrative.body.data.plan, { strategy: 'aggressive', field_set: 'narrative', start_date: '2026-12-01' });
  t.same(
    narrative.body.data.items.slice(0, 3).map((r: { daily_target_recipients: number }) => r.daily_target_recipients),
    [75, 150, 375],
  );
  t.equal(narrative.body.data.items[3].notes, null, "the old plan's rows are gone");
  t.equal(narrative.body.data.items[0].date, '2026-12-01');
  const conservative = await generate(tenant.tenantId, { start_date: '2026-12-01', total_target_recipients: 100, ramp_strategy: 'conservative' });
  t.same(
    conservative.body.data.items.slice(0, 3).map((r: { daily_target_recipients: number }) => r.daily_target_recipients),
    [25, 50, 25],
  );
  t.match((await generate(tenant.tenantId, { start_date: '2026-12-02', total_target_recipients: 10 })).body.data.plan, {
    strategy: 'standard',
    field_set: 'narrative',
  });

  const bad = async (body: unknown, status: number, field?: RegExp) => {
    const r = await generate(tenant.tenantId, body);
    t.equal(r.status, status, JSON.stringify(body));
    if (field) t.match(r.body.message, field);
  };
  await bad({ total_target_recipients: 10 }, 422, /strategy/);
  await bad({ strategy: 'standard', ramp_strategy: 'standard', total_target_recipients: 10 }, 422, /ramp_strategy/);
  await bad({ strategy: 'standard', total_target_recipients: 10_000_001 }, 422, /total_target_recipients/);
  await bad({ strategy: 'conservative', total_target_recipients: 10 }, 422, /strategy/);
  await bad({ ramp_strategy: 'gentle', total_target_recipients: 10 }, 422, /ramp_strategy/);
  await bad({ strategy: 'standard' }, 422, /total_target_recipients/);
  await bad({ start_date: '2026-13-01', total_target_recipients: 10 }, 422, /start_date/);
  await bad({ strategy: 'standard', total_target_recipients: 10, extra: 1 }, 400);
  const other = await registerTenant(app);
  const foreign = await verifiedSendingDomain(sql, ctx.vault, other.tenantId);
  await bad({ strategy: 'standard', total_target_recipients: 10, domain_id: foreign.id }, 404);
  t.equal((await generate('00000000-0000-4000-8000-000000000000', { strategy: 'standard', total_target_recipients: 1 })).status, 404);
  const audits = await sql`select action, metadata from audit_events where tenant_id = ${tenant.tenantId} and action = 'warmup.schedule_generate' order by id`;
  t.equal(audits.length, 4);
  t.match(audits[0], { metadata: { strategy: 'gentle', field_set: 'formal', total_target_recipients: 400 } });
});

t.test('PATCH changes only the fields present; day_offset outside 0..29 is 422', async (t) => {
  const tenant = await registerTenant(app);
  t.equal((await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/0`, { token: admin, body: { notes: 'x' } })).status, 404, 'no plan yet');
  await generate(tenant.tenantId, { strategy: 'standard', total_target_recipients: 1000 });
  const p1 = await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/2`, { token: admin, body: { template_slug: 'welcome', notes: 'first real batch' } });
  t.equal(p1.status, 200);
  t.match(p1.body.data, { day_offset: 2, daily_target_recipients: 250, template_slug: 'welcome', notes: 'first real batch', send_status: 'pending' });
  const p2 = await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/2`, { token: admin, body: { daily_target_recipients: 7 } });
  t.match(p2.body.data, { daily_target_recipients: 7, template_slug: 'welcome', notes: 'first real batch' }, 'absent fields unchanged');
  const p3 = await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/2`, { token: admin, body: { notes: null, send_status: 'skipped' } });
  t.match(p3.body.data, { daily_target_recipients: 7, template_slug: 'welcome', notes: null, send_status: 'skipped' });
  for (const off of ['30', '-1', 'x'])
    t.equal((await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/${off}`, { token: admin, body: { notes: 'x' } })).status, 422, `day_offset ${off}`);
  t.equal((await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/2`, { token: admin, body: { send_status: 'dispatching' } })).status, 422);
  t.equal((await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/2`, { token: admin, body: { daily_target_recipients: 1.5 } })).status, 422);
  const audits = await sql`select metadata from audit_events where tenant_id = ${tenant.tenantId} and action = 'warmup.schedule_patch' order by id`;
  t.equal(audits.length, 3);
  t.same(audits[1]!['metadata'], { day_offset: 2, changed: { daily_target_recipients: 7 } });
});

t.test("dispatch-now sends today's row to the most engaged contacts once; sent is terminal", async (t) => {
  const tenant = await registerTenant(app);
  const domain = await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId);
  const tpl = await call(app, 'POST', '/templates', {
    token: tenant.token,
    body: { name: 'Warm welcome', subject: 'Hello {{ first_name }}', body_text: 'Hi {{ first_name }}' },
  });
  t.equal(tpl.status, 201, JSON.stringify(tpl.body));
  const contact = async (email: string, createdAt: string, opens = 0) => {
    await sql`insert into contacts (tenant_id, email, first_name, created_at, updated_at)
              values (${tenant.tenantId}, ${email}, ${email.split('@')[0]!}, ${createdAt}, ${createdAt})`;
    for (let i = 0; i < opens; i++) {
      await sql`insert into events (id, tenant_id, type, recipient, occurred_at)
                values (${randomUUID()}, ${tenant.tenantId}, 'open', ${email}, '2026-11-20T00:00:00Z')`;
    }
  };
  await contact('oldest@dest.example', '2026-01-01T00:00:00Z');
  await contact('newer@dest.example', '2026-06-01T00:00:00Z');
  await contact('engaged@dest.example', '2026-09-01T00:00:00Z', 3);
  await sql`insert into contacts (tenant_id, email, status, unsubscribed_at, created_at, updated_at)
            values (${tenant.tenantId}, 'gone@dest.example', 'unsubscribed', now(), '2025-01-01', '2025-01-01')`;

  const dispatch = () => call(app, 'POST', `${schedulePath(tenant.tenantId)}/dispatch-now`, { token: admin });
  t.equal((await dispatch()).status, 404, 'no plan');
  await generate(tenant.tenantId, { strategy: 'standard', total_target_recipients: 1000, domain_id: domain.id });
  await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/0`, { token: admin, body: { daily_target_recipients: 2 } });

  const noTemplate = await dispatch();
  t.match(
    noTemplate.body.data,
    { day_offset: 0, send_status: 'failed', triggered: true, result: { error: /template_slug/ } },
    'a row without a template fails and may be dispatched again',
  );

  await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/0`, { token: admin, body: { template_slug: 'warm welcome' } });
  const first = await dispatch();
  t.equal(first.status, 200);
  t.match(first.body.data, { day_offset: 0, send_status: 'sent', triggered: true, result: { recipients: 2, accepted: 2, from_email: `hello@${domain.name}` } });
  const sends = await sql`select to_email, subject, domain_id from sends where tenant_id = ${tenant.tenantId} order by to_email`;
  t.same(
    sends.map((s) => s['to_email']),
    ['engaged@dest.example', 'oldest@dest.example'],
    'the most engaged, then the longest-standing',
  );
  t.equal(sends[0]!['subject'], 'Hello engaged');
  t.equal(sends[0]!['domain_id'], domain.id);

  const again = await dispatch();
  t.same(again.body.data, { day_offset: 0, send_status: 'sent', triggered: false, result: first.body.data.result }, 're-dispatching a sent row does nothing');
  t.equal((await sql`select count(*)::int as n from sends where tenant_id = ${tenant.tenantId}`)[0]!['n'], 2);
  const audits = await sql`select metadata from audit_events where tenant_id = ${tenant.tenantId} and action = 'warmup.schedule_dispatch' order by id`;
  t.equal(audits.length, 2, 'each dispatch that ran is audited');

  await call(app, 'PATCH', `${schedulePath(tenant.tenantId)}/1`, { token: admin, body: { template_slug: tpl.body.data.id } });
  clock.set(new Date('2026-11-26T09:00:00Z'));
  t.teardown(() => clock.set(new Date('2026-11-25T10:00:00Z')));
  // A fresh session at the new time (the first one's lifetime is measured on the test clock).
  const nextDay = await call(app, 'POST', `${schedulePath(tenant.tenantId)}/dispatch-now`, { token: await superAdminToken(app) });
  t.match(
    nextDay.body.data,
    { day_offset: 1, triggered: true, send_status: 'sent', result: { recipients: 3, accepted: 3 } },
    'the next day dispatches its own row (template by id), to every active contact up to its target',
  );
});
