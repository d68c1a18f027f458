// The scheduled workers: what each runs, how often, and the one way to run it (schedule or run-now), which records its tick.
import type { DomainDeps } from '../../deliverability/domains/deps.js';
import { runRotator } from '../../deliverability/domains/rotator.js';
import { recheckAllDomains } from '../../deliverability/domains/verification.js';
import { IDEMPOTENCY_WINDOW_MS, purgeIdempotencyKeys } from '../../sending/outbound-log/queries.js';
import { pruneKeyActivity } from '../../accounts/keys/activity-queries.js';
import { purgeInboundMessages } from '../../inbound/queries.js';
import { refreshBestSendHours } from '../../audiences/contacts/best-send-hour.js';
import type { Config } from '../../config/index.js';
import { expireQuarantines } from '../../delivery/ip-pools/queries.js';
import { runAutoRamp } from '../../deliverability/warmup/ramp.js';
import { pollDueMailboxes } from '../../delivery/bounce-mailboxes/poller.js';
import type { MailboxOpener } from '../../delivery/bounce-mailboxes/mailbox-session.js';
import { runEvidence } from '../compliance/evidence.js';
import { refreshRollups } from '../../engagement/analytics/rollup.js';
import type { Boss } from '../../jobs/boss.js';
import { AppError } from '../../kernel/errors.js';
import { runDailyDigests } from '../tenant-health/digest.js';
import { runDailyHealthChecks } from '../tenant-health/runs.js';
import { alertFor, raiseAlert } from './alerts.js';
import { recordTick, type TickOutcome } from './ticks.js';

/** What workers need; grows with the workers (the job queues carry alerts to the chat, the mailbox opener reaches the bounce mailboxes). */
export type WorkerDeps = DomainDeps & MailboxOpener & { boss: Boss };

/**
 * An environment flag a worker obeys: while `enabled` says no, its ticks (scheduled or run-now)
 * do nothing and are recorded as skipped, and /admin/workers shows env_gate_active.
 */
export interface EnvGate {
  /** The variable, as an operator sets it (SOC2_EVIDENCE_ENABLED). */
  variable: string;
  enabled(config: Config): boolean;
}

export interface ScheduledWorker {
  name: string;
  description: string;
  /** Minutes between ticks, aligned to the UTC hour or day (30 → :00 and :30). */
  intervalMinutes(deps: WorkerDeps): number;
  /** Minutes after the aligned tick the worker runs (a daily worker at 02:00 UTC: 120); 0 when absent. */
  offsetMinutes?: number;
  run(deps: WorkerDeps): Promise<Record<string, unknown>>;
  envGate?: EnvGate;
}

/** Names of the workers other code runs directly (their run-now routes). */
export const TENANT_HEALTH_WORKER = 'tenant-health-checks';
export const TENANT_DIGEST_WORKER = 'tenant-digest';

export const WORKERS: readonly ScheduledWorker[] = [
  {
    name: 'dkim-rotator',
    description:
      'Activates DKIM rotations once every public resolver returns the new key, retires old keys after their grace period, starts automatic rotations.',
    intervalMinutes: (deps) => deps.config.dkim.rotator_interval_minutes,
    run: async (deps) => ({ ...(await runRotator(deps)) }),
  },
  {
    name: 'domain-recheck',
    description:
      'Removes domain claims past their expiry that never proved control, then re-checks the DNS records of every open claim: records drift when ' +
      'a verified record disappears, and a claim whose own DKIM record appears owns its name.',
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
  {
    name: 'ip-quarantine-expiry',
    description:
      'Ends the IP-pool quarantines whose cool-down has passed, each with an expired event and an audit row (delivery already stops avoiding an address ' +
      'at the end of its cool-down; this records it).',
    intervalMinutes: () => 5,
    run: async (deps) => ({ expired: (await deps.sql.begin((tx) => expireQuarantines(tx, deps.clock.now()))).length }),
  },
  {
    name: 'warmup-auto-ramp',
    description:
      "Daily at 02:00 UTC: judges every verified domain on the previous UTC day's bounce, complaint and delivery rates and promotes, holds, demotes " +
      'or pauses it (once per tenant, domain and day); resets domains idle for 14 days; seeds per-ESP sub-caps.',
    intervalMinutes: () => 1440,
    offsetMinutes: 120,
    run: async (deps) => ({ ...(await runAutoRamp(deps)) }),
  },
  {
    name: 'bounce-mailbox-poll',
    description:
      "Polls the tenants' POP3 bounce mailboxes that are due (each every poll_interval_s): new messages by UIDL go to the bounce intake, then are " +
      'deleted on the server when delete_after_read.',
    intervalMinutes: () => 1,
    run: async (deps) => ({ ...(await pollDueMailboxes(deps)) }),
  },
  {
    name: 'soc2-evidence',
    description:
      "Daily at 02:00 UTC, only when SOC2_EVIDENCE_ENABLED: writes the day's SOC 2 evidence pack (access reviews, change management, incident response, " +
      'suppression discipline, auth events over the last 24 hours), once per UTC day.',
    intervalMinutes: () => 1440,
    offsetMinutes: 120,
    envGate: { variable: 'SOC2_EVIDENCE_ENABLED', enabled: (config) => config.flags.soc2EvidenceEnabled },
    run: async (deps) => {
      const run = await runEvidence(deps);
      return run.written ? { written: true, date: run.date, errors: run.artifact.errors.length } : { written: false, skipped: run.skipped };
    },
  },
  {
    name: TENANT_HEALTH_WORKER,
    description:
      'Daily from 06:00 UTC (hourly ticks, so a missed 06:00 is caught up): checks every tenant once a day (sending domains still verified in DNS, ' +
      'bounce and complaint rates, quota use, webhook dead letters; thresholds in config/workers.yaml) and stores each run for ' +
      '/admin/tenants/{id}/health-checks.',
    intervalMinutes: () => 60,
    run: (deps) => runDailyHealthChecks(deps),
  },
  {
    name: TENANT_DIGEST_WORKER,
    description:
      'Daily from 09:00 IST (03:30 UTC; ticks every 30 minutes): one chat line per tenant that sent in the last 24 hours or whose last health check ' +
      'was not a pass ' +
      '(sends, rates, quota, health), once per day (digest_last_posted_at); logged only without MAILPATH_CHAT_WEBHOOK_URL.',
    intervalMinutes: () => 30,
    run: (deps) => runDailyDigests(deps),
  },
  {
    name: 'analytics-rollup',
    description:
      'Recomputes the hourly analytics rollups (per tenant, and per tenant and recipient domain) of every hour whose events changed since the last ' +
      'tick, from the events; prunes per-provider refusal counters older than a day.',
    intervalMinutes: () => 5,
    run: async (deps) => ({ ...(await refreshRollups(deps)) }),
  },
];

/** The SOC 2 evidence worker's run-now: past the hour and once-a-day gates, overwriting today's pack (the env gate still holds). */
export const SOC2_EVIDENCE_FORCED: ScheduledWorker = {
  ...WORKERS.find((w) => w.name === 'soc2-evidence')!,
  run: async (deps) => ({ ...(await runEvidence(deps, { force: true })) }),
};

export function findWorker(name: string): ScheduledWorker | undefined {
  return WORKERS.find((w) => w.name === name);
}

/** The worker a run-now route needs; 503 worker_unavailable when it is not in the catalog (not wired in this build). */
export function requireWorker(name: string, workers: readonly ScheduledWorker[] = WORKERS): ScheduledWorker {
  const found = workers.find((w) => w.name === name);
  if (!found) throw new AppError('worker_unavailable', `the ${name} worker is not wired`);
  return found;
}

/** The cron expression (UTC) of an interval that divides an hour or a day, shifted by `offset` minutes (within one interval). */
export function intervalCron(minutes: number, offset = 0): string {
  if (offset !== 0) {
    if (minutes !== 1440 || offset < 0 || offset >= 1440) throw new Error(`an offset of ${offset} minutes is supported on daily workers only`);
    return `${offset % 60} ${Math.floor(offset / 60)} * * *`;
  }
  if (minutes < 60 && 60 % minutes === 0) return `*/${minutes} * * * *`;
  if (minutes % 60 === 0 && 24 % (minutes / 60) === 0) return minutes === 1440 ? '0 0 * * *' : `0 */${minutes / 60} * * *`;
  throw new Error(`an interval of ${minutes} minutes neither divides an hour nor is whole hours dividing a day`);
}

/** The next tick after `from` on an interval aligned to UTC midnight, shifted by `offset` minutes. */
export function nextTickAfter(minutes: number, from: Date, offset = 0): Date {
  const step = minutes * 60_000;
  const shift = offset * 60_000;
  return new Date((Math.floor((from.getTime() - shift) / step) + 1) * step + shift);
}

/** When the schedule next runs `worker` after `from`. */
export function nextTickOf(worker: ScheduledWorker, deps: WorkerDeps, from: Date): Date {
  return nextTickAfter(worker.intervalMinutes(deps), from, worker.offsetMinutes ?? 0);
}

/** True while the worker's environment flag keeps it off. */
export function envGateActive(worker: ScheduledWorker, config: Config): boolean {
  return worker.envGate !== undefined && !worker.envGate.enabled(config);
}

export interface WorkerRun {
  elapsed_ms: number;
  triggered: true;
  outcome: TickOutcome;
  result: Record<string, unknown> | null;
  error: string | null;
}

/**
 * Runs a worker once and records its tick; a failure is recorded and reported, not thrown. The
 * tick and any alert it raises (config/workers.yaml) are stored in one transaction.
 */
export async function runWorker(deps: WorkerDeps, worker: ScheduledWorker): Promise<WorkerRun> {
  const startedAt = deps.clock.now();
  const started = performance.now();
  let result: Record<string, unknown> | null = null;
  let error: string | null = null;
  const gated = envGateActive(worker, deps.config);
  if (gated) {
    result = { skipped: `${worker.envGate!.variable} is off` };
  } else {
    try {
      result = await worker.run(deps);
    } catch (err) {
      error = (err as Error).message || String(err);
      deps.log.error({ err, worker: worker.name }, 'worker tick failed');
    }
  }
  const elapsed = performance.now() - started;
  const outcome: TickOutcome = gated ? 'skipped' : error === null ? 'ok' : 'error';
  await deps.sql.begin(async (tx) => {
    const streak = await recordTick(tx, { name: worker.name, at: startedAt, outcome, durationMs: elapsed, error });
    const event = alertFor(deps.config.workers, outcome, streak);
    if (event === null) return;
    const failures = event === 'failing' ? streak.after : streak.before;
    await raiseAlert(deps, tx, { worker: worker.name, event, at: deps.clock.now(), failures, lastError: error });
  });
  return { elapsed_ms: Math.round(elapsed), triggered: true, outcome, result, error };
}
