// The entry point in one process with every role: each process-wide service is built once and shared by the roles, the operator port serves metrics, and a
// stop closes them all (writing the query timings last).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { loadMailpathConfig } from '../../main/config.js';
import { startMailpath } from '../../main/runtime.js';
import { SessionTokens } from '../../shared/accounts/auth/jwt.js';
import { connect } from '../../shared/db/connection.js';
import { createLogger } from '../../shared/kernel/log.js';
import { RateLimiter } from '../../shared/limits/rate-limits/limiter.js';
import { KeyUsageRecorder } from '../../shared/accounts/keys/last-used.js';
import { testEnv } from '../helpers/app.js';
import { createTestDatabase } from '../helpers/db.js';

/** Counts calls of a class's method for the duration of the test. */
function countCalls<T extends object>(t: { teardown(fn: () => unknown): void }, target: T, name: keyof T & string): () => number {
  const original = target[name] as unknown as (...args: unknown[]) => unknown;
  let calls = 0;
  (target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
    calls++;
    return original.apply(this, args);
  };
  t.teardown(() => {
    (target as Record<string, unknown>)[name] = original;
  });
  return () => calls;
}

t.test('mailpath start with all five roles builds the session tokens, rate limiter and key-use recorder once, and stops cleanly', async (t) => {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-runtime-'));
  t.teardown(async () => {
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const tokens = countCalls(t, SessionTokens, 'create');
  const limiters = countCalls(t, RateLimiter.prototype, 'start');
  const limiterCloses = countCalls(t, RateLimiter.prototype, 'close');
  const keyUsageCloses = countCalls(t, KeyUsageRecorder.prototype, 'close');
  const config = loadMailpathConfig(
    testEnv(db.url, dataDir, {
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: '0',
      MAILPATH_HTTP_PORT: '0',
      MAILPATH_MX_PORT: '0',
      MAILPATH_SUBMISSION_PORT: '0',
      MAILPATH_SUBMISSION_TLS_PORT: '0',
      MAILPATH_DNS_SERVERS: '127.0.0.1:9',
    }),
  );
  t.same(config.roles, ['api', 'mx', 'submission', 'outbound', 'scheduler'], 'every role');
  const running = await startMailpath(config, createLogger('silent'));
  t.same(
    running.roles.map((r) => r.name),
    config.roles,
  );
  t.equal(tokens(), 1, 'session tokens made once (the API and submission share them)');
  t.equal(limiters(), 1, "one rate limiter: a key's HTTP and SMTP sends count in one place");
  const ports = Object.assign({}, ...running.roles.map((r) => r.details)) as Record<string, number>;
  for (const name of ['httpsPort', 'httpPort', 'mxPort', 'starttlsPort', 'implicitTlsPort']) t.ok(ports[name]! > 0, `${name} bound`);
  t.ok(running.metricsPort! > 0, 'the operator port is bound whatever the roles');
  const scrape = await fetch(`http://127.0.0.1:${running.metricsPort}/metrics`);
  t.equal(scrape.status, 200);
  t.match(await scrape.text(), /mailpath_queue_jobs_waiting\{queue="/, 'queue depths read from the running queues');
  await running.stop();
  // The pool's statements were timed and the last flush at stop wrote them (the slow-query report's source).
  const check = connect(db.url, createLogger('silent'), { max: 1 });
  const [row] = await check<{ n: number }[]>`select count(*)::int as n from query_timings`;
  await check.end();
  t.ok(row!.n > 0, `query timings written at stop (${row!.n} statements)`);
  await running.stop(); // a second stop waits for the first and does nothing more
  t.equal(limiterCloses(), 1, 'the one rate limiter is flushed once at stop');
  t.equal(keyUsageCloses(), 1, 'one key-use recorder, flushed once at stop');
});
