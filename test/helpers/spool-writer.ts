// Child process of test/shared/engagement/tracking/spooled-recorder.test.ts: spools `count` hits of a send while its database is
// unreachable (so none is stored), prints "spooled <count>", and waits to be killed.
// Arguments: spool dir, send id, count.
import { join } from 'node:path';
import { loadConfig } from '../../shared/config/index.js';
import { connect } from '../../shared/db/connection.js';
import { createLogger } from '../../shared/kernel/log.js';
import { HitSpool } from '../../shared/engagement/tracking/hit-spool.js';
import { HitRecorder } from '../../shared/engagement/tracking/recorder.js';
import { SpooledHitRecorder } from '../../shared/engagement/tracking/spooled-recorder.js';
import { TrafficRules } from '../../shared/engagement/tracking/traffic-rules.js';

const [dir, sendId, countText] = process.argv.slice(2);
const log = createLogger('silent');
// Port 1 on loopback: nothing listens, every batch fails at once and is retried.
const unreachable = 'postgres://postgres@127.0.0.1:1/none';
const config = loadConfig({ DATABASE_URL: unreachable, MAILPATH_DATA_DIR: join(dir!, '..') });
const recorder = new HitRecorder(connect(unreachable, log, { max: 1 }), log, new TrafficRules(config.tracking), { maxBatch: 100, concurrency: 1 });
const spool = await HitSpool.open(dir!, { segmentHits: 3 });
const spooled = new SpooledHitRecorder(spool, recorder, log, { maxPending: 1000, retryMs: 50, orphanScanMs: 60_000 });
const count = Number(countText);
for (let i = 0; i < count; i++) {
  const outcome = await spooled.record({
    kind: i % 2 ? 'click' : 'open',
    sendId: sendId!,
    url: i % 2 ? 'https://shop.example/a' : undefined,
    links: i % 2 ? 3 : undefined,
    userAgent: 'Mozilla/5.0',
    ip: '192.0.2.0',
    at: new Date(Date.UTC(2026, 4, 4, 10, 0, i)),
  });
  if (outcome !== 'spooled') throw new Error(`not spooled: ${outcome}`);
}
process.stdout.write(`spooled ${count}\n`);
setInterval(() => undefined, 60_000);
