// What /admin/workers shows of each scheduled worker: its schedule, env gate, last tick, failing streak and last alert, sorted by name.
import { envGateActive, nextTickOf, WORKERS, type ScheduledWorker, type WorkerDeps } from './catalog.js';
import { listTicks, type TickOutcome } from './ticks.js';

export interface WorkerStatus {
  name: string;
  description: string;
  interval_minutes: number;
  last_tick_at: Date | null;
  last_tick_outcome: TickOutcome | null;
  last_tick_duration_ms: number | null;
  last_error: string | null;
  consecutive_failures: number;
  next_tick_estimate: Date;
  /** The variable of the worker's env gate, null when it has none. */
  env_gate: string | null;
  env_gate_active: boolean;
  last_alert_at: Date | null;
  last_alert_event: string | null;
}

/** Every worker of `workers` (the catalog by default), never-ticked ones included, sorted by name. */
export async function workerStatuses(deps: WorkerDeps, workers: readonly ScheduledWorker[] = WORKERS): Promise<WorkerStatus[]> {
  const ticks = new Map((await listTicks(deps.sql)).map((t) => [t.name, t]));
  const now = deps.clock.now();
  return workers
    .map((w) => {
      const tick = ticks.get(w.name);
      return {
        name: w.name,
        description: w.description,
        interval_minutes: w.intervalMinutes(deps),
        last_tick_at: tick?.last_tick_at ?? null,
        last_tick_outcome: tick?.last_tick_outcome ?? null,
        last_tick_duration_ms: tick?.last_tick_duration_ms ?? null,
        last_error: tick?.last_error ?? null,
        consecutive_failures: tick?.consecutive_failures ?? 0,
        next_tick_estimate: nextTickOf(w, deps, now),
        env_gate: w.envGate?.variable ?? null,
        env_gate_active: envGateActive(w, deps.config),
        last_alert_at: tick?.last_alert_at ?? null,
        last_alert_event: tick?.last_alert_event ?? null,
      };
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
