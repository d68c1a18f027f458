// Every background job of Mailpath in one list: the queue consumers and workers each role runs besides its listeners, in start order (main/roles.ts starts a
// role's jobs in turn and stops them together).
import type { Boss } from '../shared/jobs/boss.js';
import { startImportWorker } from './contact-imports/worker.js';
import { scheduleWorkers } from './scheduled-workers.js';
import { startEventWebhookDelivery } from './event-webhooks/worker.js';
import { startAuditAppender } from './audit-appender.js';
import { startBounceIntake } from './bounce-intake/worker.js';
import { startChatNotifier } from './chat-notifier.js';
import { startImpersonationAuditWorker } from './impersonation-audit.js';
import { startFanoutWorker } from './campaign-fanout/worker.js';
import { startInboundWebhookDelivery } from './inbound-webhooks/worker.js';
import { startUnsubscribeIntake } from './unsubscribe-intake/worker.js';

/** A started job: how to stop it (stop taking work, finish what is in flight). */
export interface RunningJob {
  stop(): Promise<void>;
}

/** What every job is given: the process's services satisfy all of them at once. */
export type JobDeps = Parameters<typeof startInboundWebhookDelivery>[0] &
  Parameters<typeof startBounceIntake>[0] &
  Parameters<typeof startImportWorker>[0] &
  Parameters<typeof startUnsubscribeIntake>[0] &
  Parameters<typeof startFanoutWorker>[0] &
  Parameters<typeof startEventWebhookDelivery>[0] &
  Parameters<typeof scheduleWorkers>[1] &
  Parameters<typeof startChatNotifier>[0] &
  Parameters<typeof startImpersonationAuditWorker>[0] &
  Parameters<typeof startAuditAppender>[0] & { boss: Boss };

export interface Job {
  name: string;
  /** The role that runs it (the outbound role also runs SMTP delivery, the scheduler role queue supervision). */
  role: 'outbound' | 'scheduler';
  /** What it does, in a line. */
  does: string;
  start(deps: JobDeps): Promise<RunningJob> | RunningJob;
}

export const JOBS: readonly Job[] = [
  {
    name: 'inbound-webhooks',
    role: 'outbound',
    does: "inbound mail POSTed to tenants' webhooks: the outbox rows the MX wrote, signed, retried, dead-lettered",
    start: startInboundWebhookDelivery,
  },
  {
    name: 'bounce-intake',
    role: 'outbound',
    does: 'bounce mail the MX stored (DSNs, feedback-loop complaints), mapped back to its sends',
    start: startBounceIntake,
  },
  { name: 'contact-imports', role: 'outbound', does: 'bulk contact imports: long jobs that resume after a crash', start: startImportWorker },
  {
    name: 'unsubscribe-intake',
    role: 'outbound',
    does: 'mail to List-Unsubscribe mailto addresses the MX stored, applied like the https link',
    start: startUnsubscribeIntake,
  },
  {
    name: 'campaign-fanout',
    role: 'outbound',
    does: 'campaign fan-out: recipients fixed at send time, claimed in batches, through the send use-case',
    start: startFanoutWorker,
  },
  {
    name: 'event-webhooks',
    role: 'outbound',
    does: 'event webhooks: the outbox rows written with each event, POSTed signed, retried, dead-lettered',
    start: startEventWebhookDelivery,
  },
  {
    name: 'scheduled-workers',
    role: 'scheduler',
    does: 'the timed workers on their pg-boss cron schedules (shared/operations/workers/catalog.ts)',
    start: async (deps) => ({ stop: await scheduleWorkers(deps.boss, deps) }),
  },
  { name: 'chat-notifier', role: 'scheduler', does: 'operator notifications posted to the chat webhook', start: startChatNotifier },
  { name: 'impersonation-audit', role: 'scheduler', does: 'the audit rows of impersonated writes the API queued', start: startImpersonationAuditWorker },
  {
    name: 'audit-appender',
    role: 'scheduler',
    does: 'chains committed audit rows into the hash chain, one appender at a time across processes',
    start: (deps) => startAuditAppender(deps),
  },
];

/** Starts the role's jobs in order; if one fails to start, those already started are stopped and the error thrown. */
export async function startJobs(role: Job['role'], deps: JobDeps, jobs: readonly Job[] = JOBS): Promise<RunningJob> {
  const running: RunningJob[] = [];
  try {
    for (const job of jobs.filter((j) => j.role === role)) running.push(await job.start(deps));
  } catch (err) {
    await Promise.allSettled(running.map((r) => r.stop()));
    throw err;
  }
  return { stop: async () => void (await Promise.all(running.map((r) => r.stop()))) };
}
