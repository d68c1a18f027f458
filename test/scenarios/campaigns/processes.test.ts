// Several real `mailpath start` processes on one database: they share one campaign's fan-out (nobody twice, both do work), and a scheduled campaign starts
// at its time in a process started after the one that scheduled it stopped.
import t from 'tap';
import { https, startMailpathProcess, type MailpathProcess } from '../../helpers/mailpath-process.js';
import { campaignWorld, progressOf, sendCounts, setUpCampaign, sleep } from '../../helpers/campaign-processes.js';

// One fan-out job at a time per process, two per campaign: each process works one of them.
const world = await campaignWorld(t, {
  MAILPATH_LOG_LEVEL: 'info',
  MAILPATH_CONFIG__CAMPAIGNS__FANOUT__WORKERS: '1',
  MAILPATH_CONFIG__CAMPAIGNS__FANOUT__PARALLEL_JOBS: '2',
});
const processes: MailpathProcess[] = [];
t.teardown(async () => {
  for (const p of processes) await p.stop();
});

/** Recipients a process sent, from its "campaign batch" log lines. */
function queuedBy(p: MailpathProcess, campaignId: string): number {
  let queued = 0;
  for (const line of p.log().split('\n')) {
    if (!line.includes('"campaign batch"')) continue;
    const entry = JSON.parse(line) as { campaignId?: string; queued?: number };
    if (entry.campaignId === campaignId) queued += entry.queued ?? 0;
  }
  return queued;
}

t.test('two processes share one campaign: every recipient exactly once, both processes sent', async (t) => {
  const recipients = 2000;
  const a = await startMailpathProcess(world.env);
  processes.push(a);
  // The second process only works queues: no scheduler, its own API port unused.
  const b = await startMailpathProcess({ ...world.env, MAILPATH_ROLES: 'api,outbound' });
  processes.push(b);
  const setup = await setUpCampaign(world, a.httpsPort, recipients);
  const sent = await https(a.httpsPort, 'POST', `/campaigns/${setup.campaignId}/send`, { token: setup.token });
  t.equal(sent.status, 202);
  for (let i = 0; i < 1200 && (await progressOf(world.sql, setup.campaignId)).status !== 'sent'; i++) await sleep(100);
  t.same(await progressOf(world.sql, setup.campaignId), { status: 'sent', queued: recipients, targeted: recipients });
  t.same(await sendCounts(world.sql, setup.campaignId), { total: recipients, distinct: recipients, twice: 0 }, 'nobody twice');
  // A batch's log line follows its commit, and reaches this process through a pipe: the campaign can read "sent"
  // a moment before the other process's last line arrives.
  let [byA, byB] = [0, 0];
  for (let i = 0; i < 50; i++) {
    [byA, byB] = [queuedBy(a, setup.campaignId), queuedBy(b, setup.campaignId)];
    if (byA + byB >= recipients) break;
    await sleep(100);
  }
  t.comment(`process A sent ${byA}, process B ${byB}`);
  t.equal(byA + byB, recipients, 'the log lines add up');
  t.ok(byA > 0 && byB > 0, 'both processes did work');
  await Promise.all([a.stop(), b.stop()]);
});

t.test('a scheduled campaign starts at its time through its job, in a process started after the scheduling one stopped', async (t) => {
  const first = await startMailpathProcess(world.env);
  processes.push(first);
  const setup = await setUpCampaign(world, first.httpsPort, 20);
  const at = new Date(Date.now() + 4000);
  const scheduled = await https(first.httpsPort, 'POST', `/campaigns/${setup.campaignId}/schedule`, {
    token: setup.token,
    body: { scheduled_at: at.toISOString() },
  });
  t.equal(scheduled.status, 200, scheduled.body.message ?? 'scheduled');
  await first.stop();
  t.equal((await progressOf(world.sql, setup.campaignId)).status, 'scheduled', 'nothing ran before its time');
  while (Date.now() < at.getTime() + 500) await sleep(100);
  t.equal((await progressOf(world.sql, setup.campaignId)).status, 'scheduled', 'no process: still waiting');

  const second = await startMailpathProcess(world.env);
  processes.push(second);
  for (let i = 0; i < 600 && (await progressOf(world.sql, setup.campaignId)).status !== 'sent'; i++) await sleep(100);
  const [why] = await world.sql<{ failure_reason: string | null }[]>`select failure_reason from campaigns where id = ${setup.campaignId}`;
  t.same(await progressOf(world.sql, setup.campaignId), { status: 'sent', queued: 20, targeted: 20 }, `sent (failure_reason: ${why!.failure_reason})`);
  const [row] = await world.sql<{ started_at: Date }[]>`select started_at from campaigns where id = ${setup.campaignId}`;
  t.ok(row!.started_at.getTime() >= at.getTime(), 'started at or after its time');
  t.same(await sendCounts(world.sql, setup.campaignId), { total: 20, distinct: 20, twice: 0 });
  await second.stop();
});
