// The fan-out's side of the lifecycle: pause, resume and cancel between batches, the quota pause, a suspended tenant's wait, the ways a campaign fails, and
// the scheduled start.
import t from 'tap';
import { FANOUT_JOBS } from '../../../shared/campaigns/fanout-jobs.js';
import { resumeCampaigns } from '../../../jobs/campaign-fanout/worker.js';
import { runFanout, type FanoutOutcome } from '../../../shared/campaigns/fanout.js';
import { claimBatch } from '../../../shared/campaigns/batch-queries.js';
import { call } from '../../helpers/app.js';
import {
  addresses,
  campaignApp,
  createCampaign,
  drain,
  listOf,
  readCampaign,
  sender,
  sendNow,
  sendsPerRecipient,
  type Sender,
} from '../../helpers/campaigns.js';

const s = await campaignApp(t);
const { sql } = s;

/** A sender with a campaign of `n` recipients to a list, not yet sent. */
async function campaignOf(n: number, body: Record<string, unknown> = {}): Promise<{ a: Sender; id: string; listId: string }> {
  const a = await sender(s);
  const { listId } = await listOf(sql, a.tenant.tenantId, addresses(`r${Math.random().toString(36).slice(2, 6)}-`, n));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, ...body });
  return { a, id: c.id, listId };
}

/** Runs the fan-out until its first batch is settled, then hands over as a process that is stopping would. */
async function oneBatch(id: string): Promise<FanoutOutcome> {
  let batches = 0;
  const log = {
    child: () => log,
    info: (o: { queued?: number }) => void (typeof o?.queued === 'number' && batches++),
    warn: () => {},
    error: () => {},
    debug: () => {},
  } as unknown as typeof s.ctx.log;
  return runFanout({ ...s.ctx, log }, { campaign_id: id, slot: 0 }, { stopping: () => batches > 0 });
}

const jobsOf = (id: string) =>
  sql<
    { start_after: Date; state: string }[]
  >`select start_after, state from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${id} and state = 'created'`;

t.test('pause takes effect between batches; resume goes on where it stopped', async (t) => {
  const { a, id } = await campaignOf(12);
  await sendNow(s, a.tenant.token, id);
  t.equal(await oneBatch(id), 'continued');
  const paused = await call(s.app, 'POST', `/campaigns/${id}/pause`, { token: a.tenant.token });
  t.equal(paused.status, 200);
  t.equal(paused.body.data.status, 'paused');
  t.ok(paused.body.data.paused_at);
  t.equal(await drain(s, id), 'nothing', 'a paused campaign sends nothing');
  t.equal((await sendsPerRecipient(sql, id)).size, 5, 'the first batch only');
  const resumed = await call(s.app, 'POST', `/campaigns/${id}/resume`, { token: a.tenant.token });
  t.equal(resumed.body.data.status, 'sending');
  t.ok((await jobsOf(id)).length >= 1, 'resume queues the fan-out');
  t.equal(await drain(s, id), 'completed');
  const view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.status, 'sent');
  t.equal(view.progress.queued, 12);
  t.ok([...(await sendsPerRecipient(sql, id)).values()].every((n) => n === 1));
});

t.test('cancel stops after the batch in hand; the unsent recipients become skipped (cancelled)', async (t) => {
  const { a, id } = await campaignOf(12);
  await sendNow(s, a.tenant.token, id);
  t.equal(await oneBatch(id), 'continued');
  const cancelled = await call(s.app, 'POST', `/campaigns/${id}/cancel`, { token: a.tenant.token });
  t.equal(cancelled.body.data.status, 'cancelled');
  t.ok(cancelled.body.data.cancelled_at);
  t.equal(await drain(s, id), 'cancelled');
  const view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.progress.queued, 5);
  t.equal(view.progress.skipped.cancelled, 7);
  t.equal(view.progress.remaining, 0);
  t.equal((await sendsPerRecipient(sql, id)).size, 5);
});

t.test('a cancel leaves recipients a live worker holds to it, and sweeps them once its claim ends', async (t) => {
  const { a, id } = await campaignOf(6);
  await sendNow(s, a.tenant.token, id);
  t.equal(await oneBatch(id), 'continued');
  const now = new Date();
  const held = await claimBatch(sql, id, 1, now, new Date(now.getTime() + 60_000));
  t.equal(held?.lastSeq, held?.firstSeq, 'a batch of one');
  await call(s.app, 'POST', `/campaigns/${id}/cancel`, { token: a.tenant.token });
  t.equal(await drain(s, id), 'cancelled');
  let view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.progress.skipped.cancelled, 0, 'the claimed one is left to its worker');
  t.equal(view.progress.remaining, 1);
  t.ok(
    (await jobsOf(id)).some((j) => j.start_after.getTime() > now.getTime() + 59_000),
    'a sweep is queued for when the claim ends',
  );
  await sql`update campaign_batches set claimed_until = now() - interval '1 second' where campaign_id = ${id}`;
  t.equal(await drain(s, id), 'cancelled');
  view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.progress.skipped.cancelled, 1);
  t.equal(view.progress.remaining, 0);
});

t.test('at the monthly quota the campaign pauses (quota_exceeded); resumed after the plan grows, it finishes', async (t) => {
  const { a, id } = await campaignOf(12);
  await sql`insert into plans (id, name, monthly_send_cap) values ('tiny', 'Tiny', 7) on conflict (id) do nothing`;
  await sql`update tenants set plan_id = 'tiny' where id = ${a.tenant.tenantId}`;
  await sendNow(s, a.tenant.token, id);
  t.equal(await drain(s, id), 'paused');
  let view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.status, 'paused');
  t.equal(view.waiting_reason, 'quota_exceeded');
  t.equal(view.progress.queued, 7);
  t.equal(view.progress.remaining, 5);
  await sql`update tenants set plan_id = 'campaigns' where id = ${a.tenant.tenantId}`;
  const resumed = await call(s.app, 'POST', `/campaigns/${id}/resume`, { token: a.tenant.token });
  t.equal(resumed.body.data.waiting_reason, null);
  t.equal(await drain(s, id), 'completed');
  view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.status, 'sent');
  t.equal(view.progress.queued, 12);
});

t.test("a suspended tenant's campaign waits (tenant_suspended) and goes on once the tenant is active again", async (t) => {
  const { a, id } = await campaignOf(4);
  await sendNow(s, a.tenant.token, id);
  await sql`update tenants set status = 'suspended' where id = ${a.tenant.tenantId}`;
  const before = Date.now();
  t.equal(await drain(s, id), 'waiting');
  const [row] = await sql<
    { status: string; waiting_reason: string; waiting_until: Date }[]
  >`select status, waiting_reason, waiting_until from campaigns where id = ${id}`;
  t.equal(row!.status, 'sending');
  t.equal(row!.waiting_reason, 'tenant_suspended');
  t.ok(row!.waiting_until.getTime() >= before + 299_000, 'it looks again after suspended_recheck_seconds');
  t.ok(
    (await jobsOf(id)).some((j) => Math.abs(j.start_after.getTime() - row!.waiting_until.getTime()) < 1000),
    'its next run is queued then',
  );
  t.equal((await sendsPerRecipient(sql, id)).size, 0);
  await sql`update tenants set status = 'active' where id = ${a.tenant.tenantId}`;
  t.equal(await drain(s, id), 'completed');
  const view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.status, 'sent');
  t.equal(view.waiting_reason, null);
});

t.test('a campaign fails, saying why, when its From domain stops sending, its list goes before the target is fixed, or its content goes', async (t) => {
  const domainGone = await campaignOf(3);
  await sendNow(s, domainGone.a.tenant.token, domainGone.id);
  await sql`update domains set verified_at = null where id = ${domainGone.a.domain.id}`;
  t.equal(await drain(s, domainGone.id), 'failed');
  let view = await readCampaign(s, domainGone.a.tenant.token, domainGone.id);
  t.equal(view.status, 'failed');
  t.match(view.failure_reason, /From address cannot send/);
  t.ok(view.finished_at);
  t.equal(view.progress.remaining, 3, 'nothing was sent');

  const listGone = await campaignOf(3);
  await sendNow(s, listGone.a.tenant.token, listGone.id);
  await sql`delete from lists where id = ${listGone.listId}`;
  t.equal(await drain(s, listGone.id), 'failed');
  view = await readCampaign(s, listGone.a.tenant.token, listGone.id);
  t.match(view.failure_reason, /list or segment was deleted/);

  const templated = await sender(s);
  const tpl = await call(s.app, 'POST', '/templates', { token: templated.tenant.token, body: { name: 'T', subject: 'From the template', body_text: 'Body' } });
  t.equal(tpl.status, 201);
  const { listId } = await listOf(sql, templated.tenant.tenantId, addresses('tpl', 2));
  const c = await createCampaign(s, templated.tenant.token, {
    list_id: listId,
    from_email: templated.from,
    subject: null,
    body_text: null,
    template_id: tpl.body.data.id,
  });
  await sendNow(s, templated.tenant.token, c.id);
  await sql`delete from templates where id = ${tpl.body.data.id}`;
  t.equal(await drain(s, c.id), 'failed');
  t.match((await readCampaign(s, templated.tenant.token, c.id)).failure_reason, /content cannot be sent: subject: is required/);
});

t.test('a scheduled campaign starts when its time comes, through its job; one no longer sendable then fails; an unscheduled one stays a draft', async (t) => {
  const { a, id } = await campaignOf(3, { subject: 'Scheduled' });
  const at = new Date(Date.now() + 1500);
  const res = await call(s.app, 'POST', `/campaigns/${id}/schedule`, { token: a.tenant.token, body: { scheduled_at: at.toISOString() } });
  t.equal(res.status, 200);
  t.equal(res.body.data.status, 'scheduled');
  const jobs = await jobsOf(id);
  t.equal(jobs.length, 2, 'one job per parallel slot');
  t.ok(
    jobs.every((j) => j.start_after.getTime() === at.getTime()),
    'due at scheduled_at',
  );
  t.equal(await runFanout(s.ctx, { campaign_id: id, slot: 0 }), 'nothing', 'not before its time');
  await new Promise((r) => setTimeout(r, at.getTime() - Date.now() + 50));
  t.equal(await drain(s, id), 'completed');
  const view = await readCampaign(s, a.tenant.token, id);
  t.equal(view.status, 'sent');
  t.ok(view.started_at);
  t.equal((await sendsPerRecipient(sql, id)).size, 3);

  const broken = await campaignOf(2);
  const at2 = new Date(Date.now() + 1000);
  t.equal(
    (await call(s.app, 'POST', `/campaigns/${broken.id}/schedule`, { token: broken.a.tenant.token, body: { scheduled_at: at2.toISOString() } })).status,
    200,
  );
  await sql`update domains set verified_at = null where id = ${broken.a.domain.id}`;
  await new Promise((r) => setTimeout(r, at2.getTime() - Date.now() + 50));
  t.equal(await drain(s, broken.id), 'failed');
  t.match((await readCampaign(s, broken.a.tenant.token, broken.id)).failure_reason, /could not start at the scheduled time: no sending domain/);

  const undone = await campaignOf(2);
  const at3 = new Date(Date.now() + 500);
  await call(s.app, 'POST', `/campaigns/${undone.id}/schedule`, { token: undone.a.tenant.token, body: { scheduled_at: at3.toISOString() } });
  t.equal((await call(s.app, 'DELETE', `/campaigns/${undone.id}/schedule`, { token: undone.a.tenant.token })).body.data.status, 'draft');
  await new Promise((r) => setTimeout(r, at3.getTime() - Date.now() + 50));
  t.equal(await drain(s, undone.id), 'nothing');
  t.equal((await readCampaign(s, undone.a.tenant.token, undone.id)).status, 'draft');
});

t.test('after a restart, sending campaigns and scheduled ones already due are queued again (waiting ones at their time)', async (t) => {
  const sending = await campaignOf(2);
  await sendNow(s, sending.a.tenant.token, sending.id);
  await sql`delete from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${sending.id}`;
  const due = await campaignOf(2);
  await call(s.app, 'POST', `/campaigns/${due.id}/schedule`, {
    token: due.a.tenant.token,
    body: { scheduled_at: new Date(Date.now() + 60_000).toISOString() },
  });
  await sql`update campaigns set scheduled_at = now() - interval '1 minute' where id = ${due.id}`;
  await sql`delete from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${due.id}`;
  const waiting = await campaignOf(2);
  await sendNow(s, waiting.a.tenant.token, waiting.id);
  const tomorrow = new Date(Date.now() + 86_400_000);
  await sql`update campaigns set waiting_reason = 'warmup_cap', waiting_until = ${tomorrow} where id = ${waiting.id}`;
  await sql`delete from pgboss.job where name = ${FANOUT_JOBS} and data->>'campaign_id' = ${waiting.id}`;

  t.ok((await resumeCampaigns(s.ctx)) >= 3);
  t.equal((await jobsOf(sending.id)).length, 2);
  t.equal((await jobsOf(due.id)).length, 2);
  t.ok((await jobsOf(waiting.id)).every((j) => j.start_after.getTime() === tomorrow.getTime()));
  t.ok((await resumeCampaigns(s.ctx)) >= 3);
  t.equal((await jobsOf(sending.id)).length, 2, 'a second nudge queues nothing more');
  t.equal(await drain(s, due.id), 'completed');
  t.equal(await drain(s, sending.id), 'completed');
});
