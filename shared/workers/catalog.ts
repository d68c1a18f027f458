// The scheduled workers: what each runs, how often, and the one way to run it (schedule or run-now), which records its tick.
import type { DomainDeps } from '../domains/deps.js';
import { runRotator } from '../domains/rotator.js';
import { recheckAllDomains } from '../domains/verification.js';
import { IDEMPOTENCY_WINDOW_MS, purgeIdempotencyKeys } from '../sends/queries.js';
import { pruneKeyActivity } from '../keys/activity-queries.js';
import { purgeInboundMessages } from '../inbound/queries.js';
import { refreshBestSendHours } from '../contacts/best-send-hour.js';
import { recordTick } from './ticks.js';

/** What workers need; grows with the workers. */
export type WorkerDeps = DomainDeps;

export interface ScheduledWorker {
  name: string;
  description: string;
  /** Minutes between ticks, aligned to the UTC hour or day (30 → :00 and :30). */
  intervalMinutes(deps: WorkerDeps): number;
  run(deps: WorkerDeps): Promise<Record<string, unknown>>;
}

export const WORKERS: readonly ScheduledWorker[] = [
  {
    name: 'dkim-rotator',
    description: 'Activates DKIM rotations once every public resolver returns the new key, retires old keys after their grace period, starts automatic rotations.',
    intervalMinutes: (deps) => deps.config.dkim.rotator_interval_minutes,
    run: async (deps) => ({ ...(await runRotator(deps)) }),
  },
  {
    name: 'domain-recheck',
    description:
      'Removes domain claims past their expiry that never proved control, then re-checks the DNS records of every open claim: records drift when a verified record disappears, and a claim whose own DKIM record appears owns its name.',
    intervalMinutes: (deps) => deps.config.dns.domain_recheck_hours * 60,
    run: async (deps) => ({ ...(await recheckAllDomains(deps)) }),
  },
  {
    name: 'idempotency-purge',
    description: 'Deletes Idempotency-Key answers older than their 24-hour replay window.',
    intervalMinutes: () => 60,
    run: async (deps) => ({ deleted: await purgeIdempotencyKeys(deps.sql, new Date(deps.clock.now().getTime() - IDEMPOTENCY_WINDOW_MS)) }),
  },
  {
    name: 'key-activity-prune',
    description: 'Deletes API key activity (per-minute counts, client addresses) older than key_activity.retention_days.',
    intervalMinutes: () => 60,
    run: async (deps) => ({
      ...(await pruneKeyActivity(deps.sql, new Date(deps.clock.now().getTime() - deps.config.limits.key_activity.retention_days * 86_400_000))),
    }),
  },
  {
    name: 'inbound-purge',
    description: 'Deletes received messages older than inbound retention.days that no workspace mailbox holds, with their recipients and webhook deliveries.',
    intervalMinutes: () => 60,
    run: async (deps) => ({
      deleted: await purgeInboundMessages(deps.sql, new Date(deps.clock.now().getTime() - deps.config.inbound.retention.days * 86_400_000)),
    }),
  },
  {
    name: 'best-send-hour',
    description: "Sets each contact's best_send_hour: the UTC hour with the most opens in the last 90 days (machine opens left out; null without opens).",
    intervalMinutes: () => 1440,
    run: async (deps) => ({ ...(await refreshBestSendHours(deps.sql, deps.clock.now())) }),
  },
];

export function findWorker(name: string): ScheduledWorker | undefined {
  return WORKERS.find((w) => w.name === name);
}

/** The cron expression (UTC) of an interval that divides an hour or a day. */
export function intervalCron(minutes: number): string {
  if (minutes < 60 && 60 % minutes === 0) return `*/${minutes} * * * *`;
  if (minutes % 60 === 0 && 24 % (minutes / 60) === 0) return minutes === 1440 ? '0 0 * * *' : `0 */${minutes / 60} * * *`;
  throw new Error(`an interval of ${minutes} minutes neither divides an hour nor is whole hours dividing a day`);
}

/** The next tick after `from` on an interval aligned to UTC midnight. */
export function nextTickAfter(minutes: number, from: Date): Date {
  const step = minutes * 60_000;
  return new Date((Math.floor(from.getTime() / step) + 1) * step);
}

export interface WorkerRun {
  elapsed_ms: number;
  triggered: true;
  outcome: 'ok' | 'error';
  result: Record<string, unknown> | null;
  error: string | null;
}

/** Runs a worker once and records its tick; a failure is recorded and reported, not thrown. */
export async function runWorker(deps: WorkerDeps, worker: ScheduledWorker): Promise<WorkerRun> {
  const startedAt = deps.clock.now();
  const started = performance.now();
  let result: Record<string, unknown> | null = null;
  let error: string | null = null;
  try {
    result = await worker.run(deps);
  } catch (err) {
    error = (err as Error).message || String(err);
    deps.log.error({ err, worker: worker.name }, 'worker tick failed');
  }
  const elapsed = performance.now() - started;
  const outcome = error === null ? 'ok' : 'error';
  await recordTick(deps.sql, { name: worker.name, at: startedAt, outcome, durationMs: elapsed, error });
  return { elapsed_ms: Math.round(elapsed), triggered: true, outcome, result, error };
}
