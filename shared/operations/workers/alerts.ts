// Alerts on scheduled workers: N failed ticks in a row (config/workers.yaml) raise one, and a success after it announces the recovery; each is an audit row,
// the worker's last alert, and a chat notification.
import { writeAudit } from '../audit/log.js';
import type { WorkersConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { notifyChat, type ChatDeps } from '../notify/chat.js';
import { setLastAlert, type TickOutcome } from './ticks.js';

export type AlertEvent = 'failing' | 'recovered';

/**
 * The alert a tick raises, from the failing streak before and after it: 'failing' when the
 * streak reaches alert_after_failures (once per streak), 'recovered' when a success ends a
 * streak that had alerted (if notify_recovery). Null otherwise.
 */
export function alertFor(
  config: Pick<WorkersConfig, 'alert_after_failures' | 'notify_recovery'>,
  outcome: TickOutcome,
  streak: { before: number; after: number },
): AlertEvent | null {
  const n = config.alert_after_failures;
  if (outcome === 'error' && streak.before < n && streak.after >= n) return 'failing';
  if (outcome === 'ok' && streak.before >= n && config.notify_recovery) return 'recovered';
  return null;
}

export interface AlertFacts {
  worker: string;
  event: AlertEvent;
  at: Date;
  /** The streak the alert is about: failures so far ('failing') or the failures just ended ('recovered'). */
  failures: number;
  lastError: string | null;
}

export function alertText(hostname: string, a: AlertFacts): string {
  return a.event === 'failing'
    ? `[${hostname}] worker ${a.worker} has failed ${a.failures} ticks in a row; last error: ${a.lastError ?? 'unknown'}`
    : `[${hostname}] worker ${a.worker} recovered: a tick succeeded after ${a.failures} failed ones`;
}

/** Records the alert in `tx` (the worker's last alert and an audit row) and queues its chat notification in it too. */
export async function raiseAlert(deps: ChatDeps & { config: ChatDeps['config'] & { hostname: string } }, tx: Queryable, a: AlertFacts): Promise<void> {
  await setLastAlert(tx, a.worker, a.at, a.event);
  await writeAudit(tx, {
    tenantId: null,
    actor: { type: 'system', id: null },
    action: 'worker.alert',
    resourceType: 'worker',
    resourceId: a.worker,
    metadata: { event: a.event, consecutive_failures: a.failures, last_error: a.lastError },
    at: a.at,
  });
  await notifyChat(deps, tx, alertText(deps.config.hostname, a));
}
