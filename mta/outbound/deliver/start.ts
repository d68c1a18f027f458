// Starts the outbound role's delivery: a loop claiming due sends from the delivery queue, the hand-off of sends accepted in this process, a cap on
// deliveries in flight, shared per-destination connections, and a graceful stop.
import { claimDueDeliveries, releaseDeliveries } from '../../../shared/sending/outbound-log/delivery-queue.js';
import { loadClaimedSends } from '../../../shared/sending/outbound-log/delivery-queries.js';
import type { DeliveryWorkers, HandedOver } from '../../../shared/sending/local-delivery.js';
import { IpWatchdog } from '../../../shared/delivery/ip-pools/watchdog.js';
import { Transports } from './transports.js';
import { postgresOutcomeStore } from '../../../shared/delivery/outcome-store.js';
import { deliverClaimed, deliverQueued, type ClaimedSend, type DeliveryDeps, type WorkerContext } from './worker.js';

export type { DeliveryDeps };

export interface RunningOutbound {
  /** Stops claiming, gives back the sends not yet started, waits for the deliveries in flight, then closes the connections. */
  stop(): Promise<void>;
}

// A delivery must end before its claim does (and another worker takes the send over): one still running at this
// share of job_expire_seconds is cut short and retried on the curve.
const DEADLINE_SHARE = 0.8;
// Sends held beyond those in flight, per unit of concurrency: enough that a delivery ending finds the next one
// waiting, few enough that a stop has little to give back.
const BACKLOG_FACTOR = 1;

/** A send this process will deliver: claimed from the queue (re-checked first), or handed over at acceptance. */
type Work = { kind: 'queued'; send: ClaimedSend } | { kind: 'handed'; item: HandedOver };
const idOf = (work: Work) => (work.kind === 'queued' ? work.send.id : work.item.send.id);

/**
 * One loop per process claims due sends (FOR UPDATE SKIP LOCKED, so processes share the queue) whenever there is room,
 * without waiting for earlier claims to finish; sends accepted in this process arrive through the hand-off
 * (shared/sending/local-delivery.ts) already claimed. At most `concurrency` deliveries run at once; the
 * per-destination cap is the connection pool's maxConnections (see transports.ts).
 */
export async function startOutbound(deps: DeliveryDeps): Promise<RunningOutbound> {
  const w = deps.config.delivery.workers;
  // The role is named by main/roles.ts already; the worker names itself, as its siblings do.
  const log = deps.log.child({ worker: 'delivery' });
  const ctx: WorkerContext = {
    deps: { ...deps, log },
    transports: new Transports(deps.config, log),
    outcomes: postgresOutcomeStore(deps.sql, log),
    watchdog: new IpWatchdog({ sql: deps.sql, config: deps.config, clock: deps.clock, log }),
  };
  const leaseMs = w.job_expire_seconds * 1000;
  const limit = w.concurrency * (1 + BACKLOG_FACTOR);
  const waiting: Work[] = [];
  let active = 0;
  let stopping = false;
  const roomWaiters: { n: number; wake: () => void }[] = [];
  const idle: (() => void)[] = [];
  let wakePoller: (() => void) | undefined;

  const held = () => active + waiting.length;
  const room = () => (stopping ? 0 : Math.max(0, limit - held()));

  const afterChange = () => {
    for (let i = roomWaiters.length - 1; i >= 0; i--) {
      if (stopping || room() >= roomWaiters[i]!.n) roomWaiters.splice(i, 1)[0]!.wake();
    }
    if (held() === 0) idle.splice(0).forEach((wake) => wake());
    // Room again after a full claim: the poller looks at once instead of sleeping out its interval.
    if (room() >= w.batch_size) wakePoller?.();
  };

  const run = async (work: Work): Promise<void> => {
    const signal = AbortSignal.timeout(Math.floor(leaseMs * DEADLINE_SHARE));
    try {
      if (work.kind === 'queued') await deliverQueued(ctx, work.send, signal);
      else await deliverClaimed(ctx, work.item.send, work.item.message, signal);
    } catch (err) {
      // The outcome could not be stored (the database went away): the claim runs out and a worker tries again.
      log.error({ err, sendId: idOf(work) }, 'delivery failed; the send is tried again when its claim ends');
    }
  };

  const pump = () => {
    while (!stopping && active < w.concurrency && waiting.length > 0) {
      const work = waiting.shift()!;
      active++;
      void run(work).finally(() => {
        active--;
        pump();
        afterChange();
      });
    }
  };

  const take = (work: Work[]) => {
    waiting.push(...work);
    pump();
  };

  const workers: DeliveryWorkers = {
    room,
    deliver: (items) => {
      if (stopping) {
        // Handed over while stopping: back to the queue for whichever worker comes next.
        void releaseDeliveries(
          deps.sql,
          items.map((i) => i.send.id),
          deps.clock.now(),
        ).catch((err: unknown) => log.warn({ err }, 'could not give back sends handed over during the stop; they are taken again when their claim ends'));
        return;
      }
      take(items.map((item) => ({ kind: 'handed', item })));
    },
    whenRoom: (n) => (stopping || room() >= Math.min(n, limit) ? Promise.resolve() : new Promise((wake) => roomWaiters.push({ n: Math.min(n, limit), wake }))),
  };
  deps.local.attach(workers);

  const claimOnce = async (): Promise<number> => {
    const want = Math.min(w.batch_size, room());
    if (want === 0) return 0;
    const now = deps.clock.now();
    const ids = await claimDueDeliveries(deps.sql, want, now, new Date(now.getTime() + leaseMs));
    if (ids.length === 0) return 0;
    const sends = await loadClaimedSends(deps.sql, ids);
    take(sends.map((send) => ({ kind: 'queued', send })));
    return ids.length;
  };

  const poll = async () => {
    while (!stopping) {
      let claimed = 0;
      try {
        claimed = await claimOnce();
      } catch (err) {
        log.error({ err }, 'could not claim deliveries; trying again');
      }
      if (stopping) break;
      // A full claim means a backlog: claim again at once if there is room. Otherwise wait for the interval (or room).
      if (claimed >= w.batch_size && room() >= w.batch_size) continue;
      await new Promise<void>((wake) => {
        const timer = setTimeout(wake, w.poll_interval_ms);
        wakePoller = () => {
          clearTimeout(timer);
          wake();
        };
      });
      wakePoller = undefined;
    }
  };
  const polling = poll();
  log.info({ concurrency: w.concurrency, batchSize: w.batch_size }, 'outbound delivery started');

  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        deps.local.detach(workers);
        wakePoller?.();
        afterChange();
        await polling;
        // Sends not yet started go back to the queue, due now, for another process (or this one's next start).
        const unstarted = waiting.splice(0).map(idOf);
        if (unstarted.length > 0) {
          await releaseDeliveries(deps.sql, unstarted, deps.clock.now()).catch((err: unknown) =>
            log.warn({ err, sends: unstarted.length }, 'could not give back the sends not yet started; they are taken again when their claims end'),
          );
        }
        if (held() > 0) await new Promise<void>((wake) => idle.push(wake));
        await ctx.transports.close();
        log.info('outbound delivery stopped');
      })()),
  };
}
