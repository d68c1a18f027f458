// SIGKILL a real `mailpath start` in the middle of a campaign's fan-out: after a restart every recipient has exactly one send, and every counter is exact.
import t from 'tap';
import { https, startMailpathProcess, type MailpathProcess } from '../../helpers/mailpath-process.js';
import { campaignWorld, progressOf, sendCounts, setUpCampaign, sleep } from '../../helpers/campaign-processes.js';

const RECIPIENTS = 3000;
const world = await campaignWorld(t);
const processes: MailpathProcess[] = [];
t.teardown(async () => {
  for (const p of processes) await p.stop();
});

t.test('killed mid-fan-out and restarted: no recipient lost, none sent twice', async (t) => {
  const first = await startMailpathProcess(world.env);
  processes.push(first);
  const setup = await setUpCampaign(world, first.httpsPort, RECIPIENTS);
  const sent = await https(first.httpsPort, 'POST', `/campaigns/${setup.campaignId}/send`, { token: setup.token });
  t.equal(sent.status, 202, JSON.stringify(sent.body));

  // Kill once a few batches are in: well before the end.
  for (let i = 0; i < 1200 && (await progressOf(world.sql, setup.campaignId)).queued < 200; i++) await sleep(25);
  await first.kill();
  const atKill = await progressOf(world.sql, setup.campaignId);
  const [claimed] = await world.sql<{ n: number; stored: number }[]>`
    select count(*)::int as n, count(*) filter (where exists (select 1 from sends s where s.id = r.send_id))::int as stored
    from campaign_recipients r join campaign_batches b on b.campaign_id = r.campaign_id and r.seq between b.first_seq and b.last_seq
    where r.campaign_id = ${setup.campaignId} and r.status = 'pending' and b.claimed_until > now()`;
  t.comment(
    `at the kill: ${atKill.queued} of ${atKill.targeted} queued, ${claimed!.n} claimed by the dead process (${claimed!.stored} of them with their ` +
      `send stored, not yet settled)`,
  );
  t.equal(atKill.status, 'sending');
  t.ok(atKill.queued >= 200 && atKill.queued < RECIPIENTS, 'killed in the middle');

  const second = await startMailpathProcess(world.env);
  processes.push(second);
  for (let i = 0; i < 1200 && (await progressOf(world.sql, setup.campaignId)).status !== 'sent'; i++) await sleep(100);
  const done = await progressOf(world.sql, setup.campaignId);
  t.same(done, { status: 'sent', queued: RECIPIENTS, targeted: RECIPIENTS }, 'sent, every recipient counted once');
  t.same(await sendCounts(world.sql, setup.campaignId), { total: RECIPIENTS, distinct: RECIPIENTS, twice: 0 }, 'one send per recipient');
  // A completed batch writes no recipient row (its sends say who was sent); a batch given back unfinished (a run
  // stopped by a failure, on a loaded machine a slow statement) marks the recipients it sent queued. Either way each
  // row is pending or queued, and every queued one has its send.
  const rows = await world.sql<{ status: string; n: number; unsent: number }[]>`
    select r.status, count(*)::int as n, count(*) filter (where not exists (select 1 from sends s where s.id = r.send_id))::int as unsent
    from campaign_recipients r where r.campaign_id = ${setup.campaignId} group by r.status order by r.status`;
  t.same(
    rows.map((r) => r.status).filter((status) => status !== 'pending' && status !== 'queued'),
    [],
    'every recipient row is pending or queued',
  );
  t.equal(
    rows.reduce((n, r) => n + r.n, 0),
    RECIPIENTS,
  );
  t.equal(rows.find((r) => r.status === 'queued')?.unsent ?? 0, 0, 'every queued recipient has its send stored');
  t.equal((await world.sql`select 1 from campaign_batches where campaign_id = ${setup.campaignId}`).length, 0, 'no batch left');
  const orphans = await world.sql<{ n: number }[]>`
    select count(*)::int as n from sends s where s.campaign_id = ${setup.campaignId}
      and not exists (select 1 from campaign_recipients r where r.send_id = s.id)`;
  t.equal(orphans[0]!.n, 0, "every send is a recipient's pre-assigned send id");
  await second.stop();
});
