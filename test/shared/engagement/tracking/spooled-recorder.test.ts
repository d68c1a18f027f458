// Hits answered once spooled: stored in PostgreSQL right behind the answer, kept through a database outage and a
// SIGKILL, and replayed by the next process without storing any twice. The recorder on a thread of its own too.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import t from 'tap';
import { loadConfig } from '../../../../shared/config/index.js';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { decodeSegment, HitSpool } from '../../../../shared/engagement/tracking/hit-spool.js';
import { HitRecorder, type Hit } from '../../../../shared/engagement/tracking/recorder.js';
import { ThreadedHitRecorder } from '../../../../jobs/tracking/recorder-thread.js';
import { SpooledHitRecorder } from '../../../../shared/engagement/tracking/spooled-recorder.js';
import { TrafficRules } from '../../../../shared/engagement/tracking/traffic-rules.js';
import { childModule } from '../../../helpers/cli.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 3, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});
const log = createLogger('silent');
// Every open counts (the same sends are opened many times a second): no repeat-open window.
const config = loadConfig({ DATABASE_URL: db.url, MAILPATH_DATA_DIR: '/nonexistent', MAILPATH_CONFIG__TRACKING__REPEAT_OPENS__WINDOW_SECONDS: '0' });
const rules = new TrafficRules(config.tracking);
const recorder = new HitRecorder(sql, log, rules, { maxBatch: 100, concurrency: 1 });
const OPTIONS = { maxPending: 1000, retryMs: 20, orphanScanMs: 60_000 };

function spoolDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-spool-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function delivered(): Promise<string> {
  const tenantId = await insertTenant(sql);
  const id = randomUUID();
  await sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    values (${id}, ${tenantId}, 'api', 'live', 'delivered', 'n@shop.example', 'r@dest.example', 'Hi', ${`${id}@shop.example`}, 'b@shop.example',
            '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z')`;
  return id;
}

const open = (sendId: string, second: number): Hit => ({
  kind: 'open',
  sendId,
  userAgent: 'Mozilla/5.0',
  ip: '192.0.2.0',
  at: new Date(Date.UTC(2026, 4, 4, 10, 0, second)),
});
const eventIds = async (sendId: string) => (await sql<{ id: string }[]>`select id from events where send_id = ${sendId} order by id`).map((r) => r.id);

/** Polls (at most 5 s) until the send has `n` events. */
async function eventsReach(sendId: string, n: number): Promise<string[]> {
  for (let i = 0; i < 100; i++) {
    const ids = await eventIds(sendId);
    if (ids.length >= n) return ids;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return eventIds(sendId);
}

t.test('a spooled hit is answered before its commit and stored right behind it; the segment goes once all are stored', async (t) => {
  const dir = spoolDir(t);
  const sendId = await delivered();
  const spooled = new SpooledHitRecorder(await HitSpool.open(dir, { segmentHits: 2 }), recorder, log, OPTIONS);
  const outcomes = await Promise.all([0, 1, 2].map((s) => spooled.record(open(sendId, s))));
  t.same(outcomes, ['spooled', 'spooled', 'spooled']);
  await spooled.idle();
  t.equal((await eventIds(sendId)).length, 3);
  await spooled.close();
  t.same(readdirSync(dir), [], 'every segment deleted');
});

t.test('during a database outage hits stay spooled; a process started later stores each once', async (t) => {
  const dir = spoolDir(t);
  const sendId = await delivered();
  const down = connect('postgres://postgres@127.0.0.1:1/none', log, { max: 1 });
  t.teardown(() => down.end({ timeout: 1 }));
  const failing = new SpooledHitRecorder(
    await HitSpool.open(dir, { segmentHits: 100 }),
    new HitRecorder(down, log, rules, { maxBatch: 100, concurrency: 1 }),
    log,
    OPTIONS,
  );
  t.equal(await failing.record(open(sendId, 0)), 'spooled');
  t.equal(await failing.record(open(sendId, 1)), 'spooled');
  await failing.close(200);
  t.equal(readdirSync(dir).length, 1, 'the unstored hits stay on disk');
  t.same(await eventIds(sendId), []);
  // A spool of this (still running) process is not an orphan; in production the next start is another process. The
  // SIGKILL test below does that for real; here the segment is handed over as a stopped process would leave it.
  const [name] = readdirSync(dir);
  renameSync(join(dir, name!), join(dir, name!.replace(/^[^.]+/, '4999999-1-0')));
  const next = new SpooledHitRecorder(await HitSpool.open(dir, { segmentHits: 100 }), recorder, log, OPTIONS);
  t.equal((await eventsReach(sendId, 2)).length, 2);
  await next.idle();
  await next.close();
  t.same(readdirSync(dir), []);
});

t.test('SIGKILL: hits a killed process had answered are stored by the next one, none twice (one was stored before it died)', async (t) => {
  const dir = spoolDir(t);
  const sendId = await delivered();
  const child = childModule('test/helpers/spool-writer.ts');
  const writer = spawn(process.execPath, [...child.nodeArgs, fileURLToPath(child.url), dir, sendId, '7'], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.teardown(() => writer.kill('SIGKILL'));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    writer.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('spooled 7')) resolve();
    });
    writer.on('exit', (code) => reject(new Error(`the writer exited early (${code})`)));
  });
  writer.kill('SIGKILL');
  await new Promise((resolve) => writer.once('exit', resolve));
  const segments = readdirSync(dir);
  t.equal(segments.length, 3, 'seven hits in segments of three: three files');
  const spooledHits = segments.flatMap((n) => decodeSegment(readFileSync(join(dir, n), 'utf8')));
  t.equal(spooledHits.length, 7);
  // As if the killed process had committed one of them just before it died.
  await recorder.record(spooledHits[4]!.hit, { eventId: spooledHits[4]!.id, replay: false });

  // Room for three waiting hits: the three segments are claimed one after another, not read in at once.
  const next = new SpooledHitRecorder(await HitSpool.open(dir, { segmentHits: 100 }), recorder, log, { ...OPTIONS, maxPending: 3 });
  const ids = await eventsReach(sendId, 7);
  await next.idle();
  t.same(ids, spooledHits.map((h) => h.id).sort(), 'every answered hit stored under its spooled id, once');
  await next.close();
  t.same(readdirSync(dir), [], 'the claimed segments deleted');
  t.equal((await eventIds(sendId)).length, 7);
});

t.test('the recorder on a thread of its own stores hits and reports their outcomes; close waits for those in flight', async (t) => {
  const sendId = await delivered();
  const threaded = new ThreadedHitRecorder(
    { databaseUrl: db.url, logLevel: 'silent', tracking: config.tracking, options: { maxBatch: 100, concurrency: 1 } },
    log,
    () => recorder,
  );
  const outcomes = await Promise.all([threaded.record(open(sendId, 0)), threaded.record(open(randomUUID(), 1))]);
  t.same(outcomes, ['recorded', 'unknown_send']);
  const eventId = randomUUID();
  const last = threaded.record(open(sendId, 2), { eventId, replay: false });
  await threaded.close();
  t.equal(await last, 'recorded', 'a hit handed over before close is committed');
  t.ok((await eventIds(sendId)).includes(eventId), 'under the id it was given');
  t.equal(await threaded.record(open(sendId, 3)), 'recorded', 'after close, hits go to the fallback recorder');
  t.equal((await eventIds(sendId)).length, 3);
});

t.test('a recorder thread that fails: what it held is rejected, later hits are recorded on the main thread', async (t) => {
  const sendId = await delivered();
  // An invalid pattern: the thread throws while it builds its traffic rules.
  const broken = { ...config.tracking, machine_opens: { ...config.tracking.machine_opens, user_agents: ['('] } };
  const threaded = new ThreadedHitRecorder(
    { databaseUrl: db.url, logLevel: 'silent', tracking: broken, options: { maxBatch: 100, concurrency: 1 } },
    log,
    () => recorder,
  );
  // Handed over before the thread failed (rejected), or not yet (recorded here): either way answered.
  const first = await threaded.record(open(sendId, 0)).catch(() => 'rejected');
  t.ok(first === 'rejected' || first === 'recorded', String(first));
  t.equal(await threaded.record(open(sendId, 1)), 'recorded', 'after the failure, on the main thread');
  t.equal((await eventIds(sendId)).length, first === 'recorded' ? 2 : 1);
  await threaded.close();
});
