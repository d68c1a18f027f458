// The receiver-answer table: 2xx delivered, 4xx (not 429) dead at once, 429 per Retry-After, 5xx/timeout/errors on the 30 s … 24 h backoff for 7 attempts.
import t from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import type { PostResult } from '../../../shared/webhooks/post.js';
import { backoffSeconds, decide, maxAttempts, retryAfterSeconds } from '../../../shared/webhooks/retry-schedule.js';

const config = loadConfig({}).webhooks;
const now = new Date('2026-03-01T10:00:00Z');
const inSeconds = (s: number) => new Date(now.getTime() + s * 1000);
const answered = (status: number, extra: Partial<{ retryAfter: string; snippet: string }> = {}): PostResult => ({
  kind: 'answered',
  status,
  retryAfter: extra.retryAfter,
  snippet: extra.snippet ?? '',
  durationMs: 5,
});
const failed = (error: string, timedOut = false): PostResult => ({ kind: 'failed', error, timedOut, durationMs: 5 });

t.test('the shipped schedule: 7 attempts, waits from 30 s growing to 24 h', async (t) => {
  t.equal(maxAttempts(config), 7);
  t.same(
    [1, 2, 3, 4, 5, 6].map((n) => backoffSeconds(config, n)),
    [30, 300, 1800, 7200, 21600, 86400],
  );
  t.equal(backoffSeconds(config, 50), 86400, 'past the list the last wait repeats');
  t.equal(backoffSeconds(config, 0), 30);
  t.equal(config.timeout_seconds, 10, 'receivers get 10 s by default');
  t.equal(config.allow_http, false);
  t.equal(config.allow_private_addresses, false);
});

t.test('2xx is delivered, whatever the attempt', async (t) => {
  for (const status of [200, 201, 202, 204, 299]) t.same(decide(config, { attempt: 7, result: answered(status), now }), { kind: 'delivered' }, String(status));
});

t.test('a 4xx other than 429 is dead at once; so is a redirect (never followed)', async (t) => {
  for (const status of [400, 401, 403, 404, 410, 413, 422]) {
    t.same(
      decide(config, { attempt: 1, result: answered(status, { snippet: 'nope' }), now }),
      { kind: 'dead', error: `HTTP ${status}: nope (a 4xx answer is not retried)` },
      String(status),
    );
  }
  t.same(decide(config, { attempt: 1, result: answered(301), now }), {
    kind: 'dead',
    error: 'HTTP 301 (only a 2xx answer delivers; redirects are not followed)',
  });
});

t.test('5xx, timeouts, connection errors and refused addresses follow the backoff, then die after the 7th attempt', async (t) => {
  const results: PostResult[] = [
    answered(500),
    answered(503, { snippet: 'down' }),
    failed('no answer within 10 s', true),
    failed('ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9'),
    { kind: 'refused', error: 'webhook_url host x resolves to a loopback address, which webhooks may not reach', durationMs: 1 },
  ];
  for (const result of results) {
    const waits = [1, 2, 3, 4, 5, 6].map((attempt) => {
      const d = decide(config, { attempt, result, now });
      return d.kind === 'retry' ? (d.at.getTime() - now.getTime()) / 1000 : d.kind;
    });
    t.same(waits, [30, 300, 1800, 7200, 21600, 86400], result.kind);
    t.match(decide(config, { attempt: 7, result, now }), { kind: 'dead', error: /\(gave up after 7 attempts\)$/ });
  }
  t.match(decide(config, { attempt: 2, result: answered(503, { snippet: 'down' }), now }), { kind: 'retry', error: 'HTTP 503: down' });
});

t.test('429 waits what Retry-After says, clamped; without one (or unreadable) it takes the backoff; it counts as an attempt', async (t) => {
  t.same(decide(config, { attempt: 1, result: answered(429, { retryAfter: '120' }), now }), { kind: 'retry', at: inSeconds(120), error: 'HTTP 429' });
  t.same(decide(config, { attempt: 3, result: answered(429, { retryAfter: 'Sun, 01 Mar 2026 11:00:00 GMT' }), now }), {
    kind: 'retry',
    at: inSeconds(3600),
    error: 'HTTP 429',
  });
  t.same(decide(config, { attempt: 2, result: answered(429), now }), { kind: 'retry', at: inSeconds(300), error: 'HTTP 429' }, 'no Retry-After: backoff');
  t.same(
    decide(config, { attempt: 2, result: answered(429, { retryAfter: 'soon' }), now }),
    { kind: 'retry', at: inSeconds(300), error: 'HTTP 429' },
    'unreadable: backoff',
  );
  t.same(
    decide(config, { attempt: 1, result: answered(429, { retryAfter: '9999999' }), now }),
    { kind: 'retry', at: inSeconds(86400), error: 'HTTP 429' },
    'at most 24 h',
  );
  t.match(decide(config, { attempt: 7, result: answered(429, { retryAfter: '5' }), now }), { kind: 'dead', error: 'HTTP 429 (gave up after 7 attempts)' });
});

t.test('Retry-After: delay-seconds or any HTTP-date form, bounded to 1 s … 24 h', async (t) => {
  t.equal(retryAfterSeconds('30', now), 30);
  t.equal(retryAfterSeconds(' 45 ', now), 45);
  t.equal(retryAfterSeconds('0', now), 1, 'never a hot loop');
  t.equal(retryAfterSeconds('Sun, 01 Mar 2026 10:10:00 GMT', now), 600, 'IMF-fixdate');
  t.equal(retryAfterSeconds('Sunday, 01-Mar-26 10:10:00 GMT', now), 600, 'RFC 850');
  t.equal(retryAfterSeconds('Sun Mar  1 10:10:00 2026', now) !== undefined, true, 'asctime');
  t.equal(retryAfterSeconds('Sat, 28 Feb 2026 10:00:00 GMT', now), 1, 'a date in the past: as soon as allowed');
  t.equal(retryAfterSeconds('Fri, 01 Mar 2030 10:00:00 GMT', now), 86400);
  for (const bad of [undefined, '', ' ', '-5', '1.5', '10s', 'tomorrow', '2026-03-01T11:00:00Z'])
    t.equal(retryAfterSeconds(bad, now), undefined, JSON.stringify(bad));
});

t.test('another schedule from config: attempts follow the list', async (t) => {
  const short = { retry_delays_seconds: [5, 10] };
  t.equal(maxAttempts(short), 3);
  t.match(decide(short, { attempt: 2, result: answered(500), now }), { kind: 'retry', at: inSeconds(10) });
  t.match(decide(short, { attempt: 3, result: answered(500), now }), { kind: 'dead' });
});

t.test('config/webhooks.yaml values are overridable by environment and validated by name', async (t) => {
  const c = loadConfig({
    MAILPATH_CONFIG__WEBHOOKS__TIMEOUT_SECONDS: '0.5',
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
    MAILPATH_CONFIG__WEBHOOKS__RETRY_DELAYS_SECONDS: '[1,2,3]',
  }).webhooks;
  t.match(c, { timeout_seconds: 0.5, allow_http: true, allow_private_addresses: true, retry_delays_seconds: [1, 2, 3] });
  t.throws(
    () => loadConfig({ MAILPATH_CONFIG__WEBHOOKS__RETRY_DELAYS_SECONDS: '[300,30]' }),
    /config\/webhooks\.retry_delays_seconds: each wait must be at least the one before/,
  );
  t.throws(() => loadConfig({ MAILPATH_CONFIG__WEBHOOKS__RETRY_DELAYS_SECONDS: '[30,90000]' }), /config\/webhooks\.retry_delays_seconds\.1/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__WEBHOOKS__TIMEOUT_SECONDS: '0' }), /config\/webhooks\.timeout_seconds/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'maybe' }), /config\/webhooks\.allow_http/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__WEBHOOKS__WORKERS__BATCH_SIZE: '0' }), /config\/webhooks\.workers\.batch_size/);
});
