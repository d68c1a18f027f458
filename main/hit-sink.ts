// Where the tracking endpoints' hits go, composed from config/tracking.yaml `recorder`: the spool in front (answer
// once the hit is fsynced locally), the recorder on a thread of its own (PostgreSQL only), or the plain recorder.
import { join } from 'node:path';
import type { Config } from '../shared/config/index.js';
import type { Sql } from '../shared/db/connection.js';
import type { Logger } from '../shared/kernel/log.js';
import { HitSpool } from '../shared/engagement/tracking/hit-spool.js';
import { HitRecorder, type HitSink } from '../shared/engagement/tracking/recorder.js';
import { ThreadedHitRecorder } from '../jobs/tracking/recorder-thread.js';
import { SpooledHitRecorder } from '../shared/engagement/tracking/spooled-recorder.js';
import { TrafficRules } from '../shared/engagement/tracking/traffic-rules.js';

/** The spool's directory under the data dir. */
export const HIT_SPOOL_DIR = 'tracking-spool';

/**
 * The recorder runs on a thread of its own only with DATABASE_URL (the embedded database serves one session, the
 * main thread's); the spool only in a process with the api role.
 */
export async function buildHitSink(config: Config, sql: Sql, log: Logger): Promise<HitSink> {
  const { recorder } = config.tracking;
  const options = { maxBatch: recorder.max_batch, concurrency: recorder.concurrency };
  let local: HitRecorder | undefined;
  const onThisThread = () => (local ??= new HitRecorder(sql, log, new TrafficRules(config.tracking), options));
  const sink: HitSink =
    recorder.thread && config.databaseUrl
      ? new ThreadedHitRecorder({ databaseUrl: config.databaseUrl, logLevel: config.logLevel, tracking: config.tracking, options }, log, onThisThread)
      : onThisThread();
  // Only a process that answers tracking requests keeps a spool (and replays what a stopped one left).
  if (!recorder.spool.enabled || !config.roles.includes('api')) return sink;
  const spool = await HitSpool.open(join(config.dataDir, HIT_SPOOL_DIR), { segmentHits: recorder.spool.segment_hits });
  return new SpooledHitRecorder(spool, sink, log, {
    maxPending: recorder.spool.max_pending,
    retryMs: recorder.spool.retry_ms,
    orphanScanMs: recorder.spool.orphan_scan_seconds * 1000,
  });
}
