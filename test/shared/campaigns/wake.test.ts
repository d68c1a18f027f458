// Campaigns waiting on a limit go on at once when an operator lifts it: a warm-up advance or a domain's resume (warmup_cap), a plan change (quota_exceeded),
// with the real fan-out worker; the month's quota reset resumes a quota pause by itself; other tenants' and callers' pauses are left alone.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { FANOUT_JOBS } from '../../../shared/campaigns/fanout-jobs.js';
import { resumeCampaigns, startFanoutWorker } from '../../../jobs/campaign-fanout/worker.js';
import { nextUtcMonth } from '../../../shared/deliverability/warmup/tiers.js';
import { call, createKey, superAdminToken } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, drain, listOf, sender, sendNow, type Sender } from '../../helpers/campaigns.js';

const clock = new ManualClock(new Date());
// Tier 0 lets 5 a day through, tier 1 a hundred.
const s = await campaignApp(t, { clock, env: { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[5, 100]' } });
const { sql } = s;
const admin = await superAdminToken(s.app);

const warmupUrl = (a: Sender, action: string) => `/admin/tenants/${a.tenant.tenantId}/warmup/domains/${a.domain.id}/${action}`;

/** A tenant's campaign of `n` recipients, not yet sent; `tier1`: its domain advanced to 100 a day first. */
async function campaignOf(n: number, tier1 = false): Promise<{ a: Sender; key: string; id: string }> {
  const a = await sender(s);
  if (tier1) await call(s.app, 'POST', warmupUrl(a, 'advance'), { token: admin, body: {} });
  const { key } = await createKey(s.app, a.tenant);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses(`k${Math.random().toString(36).slice(2, 6)}-`, n));
  const c = await createCampaign(s, key, { list_id: listId, from_email: a.from });
  return { a, key, id: c.id };
}

const row = async (id: string) =>
  (
    await sql<{ status: string; waiting_reason: string | null; waiting_until: Date | null; queued: number }[]>`
    select status, waiting_reason, waiting_until, (select count(*)::int from sends where campaign_id = ${id}) as queued from campaigns where id = ${id}`
  )[0]!;

/** Polls the campaign (every 100 ms, at most 20 s) until `ok`; fails the test with its last state otherwise. */
async function until(t: { ok(v: unknown, m: string): void }, id: string, what: string, ok: (r: Awaited<ReturnType<typeof row>>) => boolean) {
  const deadline = Date.now() + 20_000;
  let last = await row(id);
  while (!ok(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    last = await row(id);
  }
  t.ok(ok(last), `${what} (${JSON.stringify(last)})`);
  return last;
}

/** Runs the test with the outbound role's fan-out worker, as `mailpath start` does, stopped at its end. */
async function withWorker(fn: () => Promise<void>) {
  const worker = await startFanoutWorker(s.ctx);
  try {
    await fn();
  } finally {
    await worker.stop();
  }
}

t.test("an advance wakes the tenant's campaign waiting on the cap at once; another tenant's keeps waiting for 00:00 UTC", async (t) => {
  const mine = await campaignOf(12);
  const theirs = await campaignOf(12);
  await withWorker(async () => {
    await sendNow(s, mine.key, mine.id);
    await sendNow(s, theirs.key, theirs.id);
    for (const c of [mine, theirs]) await until(t, c.id, 'waits on the cap after 5', (r) => r.waiting_reason === 'warmup_cap' && r.queued === 5);
    const adv = await call(s.app, 'POST', warmupUrl(mine.a, 'advance'), { token: admin, body: {} });
    t.equal(adv.status, 200, JSON.stringify(adv.body));
    t.match(adv.body.data, { tier: 1, daily_cap: 100, campaigns_woken: 1 });
    await until(t, mine.id, 'sent right after the advance', (r) => r.status === 'sent' && r.queued === 12);
    const other = await row(theirs.id);
    t.match(other, { status: 'sending', waiting_reason: 'warmup_cap', queued: 5 }, 'the other tenant still waits');
    t.ok(other.waiting_until, 'until its window');
  });
  const [audit] = await sql`select metadata from audit_events where action = 'warmup.advance' and resource_id = ${mine.a.domain.id}`;
  t.same(audit!['metadata'].woken_campaign_ids, [mine.id], 'the audit row names the campaigns woken');
});

t.test('resuming a paused domain wakes the campaign its pause held', async (t) => {
  const c = await campaignOf(4);
  t.equal((await call(s.app, 'POST', warmupUrl(c.a, 'pause'), { token: admin, body: {} })).status, 200);
  await withWorker(async () => {
    await sendNow(s, c.key, c.id);
    await until(t, c.id, 'waits while the domain is paused', (r) => r.waiting_reason === 'warmup_cap' && r.queued === 0);
    const res = await call(s.app, 'POST', warmupUrl(c.a, 'resume'), { token: admin, body: {} });
    t.match(res.body.data, { paused: false, campaigns_woken: 1 });
    await until(t, c.id, 'sent right after the resume', (r) => r.status === 'sent' && r.queued === 4);
  });
});

t.test("a plan with room resumes the campaigns paused at the quota at once, not a caller's pause", async (t) => {
  const c = await campaignOf(12, true);
  await sql`insert into plans (id, name, monthly_send_cap) values ('tiny', 'Tiny', 7) on conflict (id) do nothing`;
  await sql`update tenants set plan_id = 'tiny' where id = ${c.a.tenant.tenantId}`;
  // A second campaign of the tenant, paused by its caller: a plan change is no reason to send it.
  const { listId } = await listOf(sql, c.a.tenant.tenantId, addresses('m-', 2));
  const manual = (await createCampaign(s, c.key, { list_id: listId, from_email: c.a.from })).id as string;
  await sendNow(s, c.key, manual);
  t.equal((await call(s.app, 'POST', `/campaigns/${manual}/pause`, { token: c.key })).status, 200);
  await withWorker(async () => {
    await sendNow(s, c.key, c.id);
    const paused = await until(t, c.id, 'paused at the quota after 7', (r) => r.status === 'paused' && r.waiting_reason === 'quota_exceeded' && r.queued === 7);
    t.equal(paused.waiting_until?.toISOString(), nextUtcMonth(clock.now()).toISOString(), 'it says when the quota resets');
    const same = await call(s.app, 'PUT', `/admin/tenants/${c.a.tenant.tenantId}/plan`, { token: admin, body: { plan_id: 'tiny' } });
    t.match(same.body.data, { changed: false, campaigns_resumed: 0 }, 'no room: nothing resumed');
    const res = await call(s.app, 'PUT', `/admin/tenants/${c.a.tenant.tenantId}/plan`, { token: admin, body: { plan_id: 'campaigns' } });
    t.equal(res.status, 200, JSON.stringify(res.body));
    t.match(res.body.data, { changed: true, campaigns_resumed: 1 });
    await until(t, c.id, 'sent right after the plan change', (r) => r.status === 'sent' && r.queued === 12);
    t.match(await row(manual), { status: 'paused', waiting_reason: null }, "the caller's pause stays");
  });
  const [audit] = await sql`
    select metadata from audit_events where action = 'tenant.plan_changed' and tenant_id = ${c.a.tenant.tenantId} order by id desc limit 1`;
  t.same(audit!['metadata'].resumed_campaign_ids, [c.id]);
});

t.test("the month's quota reset resumes a quota pause by itself (its job is queued for the 1st, and again after a restart)", async (t) => {
  const c = await campaignOf(12, true);
  await sql`update tenants set plan_id = 'tiny' where id = ${c.a.tenant.tenantId}`;
  await sendNow(s, c.key, c.id);
  t.equal(await drain(s, c.id), 'paused');
  const reset = nextUtcMonth(clock.now());
  const jobs = await sql<{ start_after: Date }[]>`
    select start_after from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${c.id} and state = 'created' and start_after > now()`;
  t.ok(
    jobs.some((j) => j.start_after.getTime() === reset.getTime()),
    'a run is queued for the reset',
  );
  t.equal(await drain(s, c.id), 'nothing', 'before the reset it stays paused');
  t.equal((await row(c.id)).status, 'paused');
  await sql`delete from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${c.id}`;
  t.ok((await resumeCampaigns(s.ctx)) >= 1, 'a restart queues it again');
  const again = await sql<{ start_after: Date }[]>`select start_after from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${c.id}`;
  t.ok(
    again.some((j) => j.start_after.getTime() === reset.getTime()),
    'for the reset',
  );
  clock.set(new Date(reset.getTime() + 60_000));
  t.equal(await drain(s, c.id), 'completed', 'the new month counts again: the last 5 go');
  t.match(await row(c.id), { status: 'sent', queued: 12, waiting_reason: null });
});
