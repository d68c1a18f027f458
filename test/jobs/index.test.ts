// The jobs catalogue: one list of what each role runs, names unique; starting a role's jobs stops the started ones when one fails.
import t from 'tap';
import { JOBS, startJobs, type Job, type JobDeps } from '../../jobs/index.js';

t.test('the catalogue names each job once and gives both roles their jobs', async (t) => {
  const names = JOBS.map((j) => j.name);
  t.equal(new Set(names).size, names.length, 'unique names');
  t.same(
    JOBS.filter((j) => j.role === 'outbound').map((j) => j.name),
    ['inbound-webhooks', 'bounce-intake', 'contact-imports', 'unsubscribe-intake', 'campaign-fanout', 'event-webhooks'],
  );
  t.same(
    JOBS.filter((j) => j.role === 'scheduler').map((j) => j.name),
    ['scheduled-workers', 'chat-notifier', 'impersonation-audit', 'audit-appender'],
  );
  for (const job of JOBS) t.ok(job.does.length > 10, `${job.name} says what it does`);
});

t.test('a job that fails to start stops those started before it; the others of the role are never started', async (t) => {
  const events: string[] = [];
  const job = (name: string, fails = false): Job => ({
    name,
    role: 'outbound',
    does: 'a test job that records its start and stop',
    start: async () => {
      if (fails) throw new Error(`${name} cannot start`);
      events.push(`start ${name}`);
      return { stop: async () => void events.push(`stop ${name}`) };
    },
  });
  const other: Job = { ...job('elsewhere'), role: 'scheduler' };
  await t.rejects(startJobs('outbound', {} as JobDeps, [job('a'), job('b'), job('c', true), job('d'), other]), /c cannot start/);
  t.same(events.sort(), ['start a', 'start b', 'stop a', 'stop b']);

  events.length = 0;
  const running = await startJobs('outbound', {} as JobDeps, [job('a'), other]);
  await running.stop();
  t.same(events, ['start a', 'stop a'], "only the role's jobs, stopped together");
});
