// Child process of bench/audiences.ts: runs one stored import to its end and prints its time and this process's peak RSS as JSON.
import { systemClock } from '../../shared/kernel/clock.js';
import { loadConfig } from '../../shared/config/index.js';
import { connect } from '../../shared/db/connection.js';
import { startBoss } from '../../shared/jobs/boss.js';
import { runImport } from '../../shared/audiences/imports/run.js';
import { createLogger } from '../../shared/kernel/log.js';

const [databaseUrl, importId, dataDir] = process.argv.slice(2) as [string, string, string];
const config = loadConfig({
  DATABASE_URL: databaseUrl,
  MAILPATH_DATA_DIR: dataDir,
  MAILPATH_LOG_LEVEL: 'silent',
  // One slice for the whole file: continuations (a new job, a re-read of the file's start) are not measured here.
  MAILPATH_CONFIG__LIMITS__IMPORTS__SLICE_SECONDS: '3599',
  MAILPATH_CONFIG__LIMITS__IMPORTS__JOB_EXPIRE_SECONDS: '3600',
  ...(process.env['BENCH_IMPORT_BATCH'] ? { MAILPATH_CONFIG__LIMITS__IMPORTS__BATCH_SIZE: process.env['BENCH_IMPORT_BATCH'] } : {}),
});
const log = createLogger('silent');
const sql = connect(databaseUrl, log, { max: 4 });
const boss = await startBoss(sql, log, { supervise: false });
// Peak heap and off-heap (Buffer) memory, sampled: what the RSS is made of.
const peak = { heapMiB: 0, arrayBuffersMiB: 0 };
const sampler = setInterval(() => {
  const m = process.memoryUsage();
  peak.heapMiB = Math.max(peak.heapMiB, m.heapUsed / 1048576);
  peak.arrayBuffersMiB = Math.max(peak.arrayBuffersMiB, m.arrayBuffers / 1048576);
}, 100);
const started = performance.now();
const cpu0 = process.cpuUsage();
const outcome = await runImport({ sql, boss, clock: systemClock, log, config }, importId);
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpu0);
clearInterval(sampler);
process.stdout.write(
  `${JSON.stringify({ outcome, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, maxRssMiB: process.resourceUsage().maxRSS / 1024, ...peak })}\n`,
);
await boss.stop({ graceful: false, wait: true });
await sql.end({ timeout: 5 });
