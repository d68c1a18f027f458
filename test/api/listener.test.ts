// The API listeners over real sockets: timeouts (408), header overflow (431), parser errors (400), framework errors, the
// HTTP→HTTPS redirect: every answer in the error envelope with a slug and X-RateLimit-* headers, counted per address.
import t from 'tap';
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { loadConfig, type Env } from '../../shared/config/index.js';
import { connect, type Sql } from '../../shared/db/connection.js';
import { createLogger } from '../../shared/kernel/log.js';
import { ManualClock, systemClock } from '../../shared/kernel/clock.js';
import { RateLimiter } from '../../shared/limits/rate-limits/limiter.js';
import { LONGEST_REQUEST_LINE } from '../../api/listener.js';
import { startApi, type RunningApi } from '../../api/server.js';
import { createTestDatabase } from '../helpers/db.js';
import { testEnv, type TestLike } from '../helpers/app.js';
import { stopOnTeardown } from '../helpers/net.js';
import { startBoss, type Boss } from '../../shared/jobs/boss.js';
import { buildServices } from '../../main/services.js';

const PUBLIC_LIMIT = 500;
const MAX_HEADER_BYTES = 4096;
/** What Node's parser allows the head: the headers' limit plus room for the longest documented request line. */
const HEAD_LIMIT = MAX_HEADER_BYTES + LONGEST_REQUEST_LINE;
const BODY_LIMIT = 4096;

let sql: Sql;
let boss: Boss;
let databaseUrl: string;

t.before(async () => {
  const db = await createTestDatabase();
  databaseUrl = db.url;
  sql = connect(db.url, createLogger('silent'), { max: 4 });
  boss = await startBoss(sql, createLogger('silent'), { supervise: false });
  t.teardown(async () => {
    await boss.stop({ graceful: false, wait: true });
    await sql.end({ timeout: 5 });
    await db.drop();
  });
});

interface Started {
  api: RunningApi;
  /** Error-level log records of the process (there should be none). */
  errors: string[];
}

/**
 * The api role on free loopback ports with short timeouts. Its rate limiter reads a clock that stands still
 * 30.5 s into a minute, so the per-address counts the answers report never straddle a window edge.
 */
async function start(t: TestLike, env: Env = {}): Promise<Started> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-listener-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const config = loadConfig(
    testEnv(databaseUrl, dataDir, {
      MAILPATH_HTTPS_PORT: '0',
      MAILPATH_HTTP_PORT: '0',
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_PUBLIC_URL: 'https://mail.example.test',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: String(PUBLIC_LIMIT),
      MAILPATH_CONFIG__LIMITS__REQUEST__TIMEOUT_MS: '1000',
      MAILPATH_CONFIG__LIMITS__REQUEST__HEADERS_TIMEOUT_MS: '500',
      MAILPATH_CONFIG__LIMITS__REQUEST__KEEP_ALIVE_TIMEOUT_MS: '300',
      MAILPATH_CONFIG__LIMITS__REQUEST__MAX_HEADER_BYTES: String(MAX_HEADER_BYTES),
      MAILPATH_CONFIG__LIMITS__REQUEST__BODY_LIMIT_BYTES: String(BODY_LIMIT),
      ...env,
    }),
  );
  const errors: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line && JSON.parse(line).level >= 50) errors.push(line);
      done();
    },
  });
  const log = createLogger('error', sink);
  const services = await buildServices({ config, sql, log, boss, clock: systemClock });
  t.teardown(() => services.close());
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_500));
  services.rateLimiter = new RateLimiter(sql, log, config.limits.rate_limits.sync_interval_ms, () => clock.now().getTime());
  return { api: stopOnTeardown(t, await startApi(services)), errors };
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/**
 * Writes `text` on a fresh connection (TLS to the HTTPS port, plain to the HTTP one) and reads until the server
 * closes it. Bounded: a server that holds the connection for 10 s fails the test.
 */
function exchange(kind: 'https' | 'http', port: number, text: string, trickle = ''): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    // After `text`, `trickle` goes out one byte every 100 ms (a slow client), until the server closes.
    const send = () => {
      socket.write(text);
      let i = 0;
      if (trickle) timer = setInterval(() => (i < trickle.length && !socket.destroyed ? socket.write(trickle[i++]!) : clearInterval(timer)), 100);
    };
    const socket: Socket =
      kind === 'https' ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, send) : netConnect({ host: '127.0.0.1', port }, send);
    socket.on('close', () => clearInterval(timer));
    const chunks: Buffer[] = [];
    socket.setTimeout(10_000, () => socket.destroy(new Error('the server held the connection for 10 s')));
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const data = Buffer.concat(chunks).toString('utf8');
      const split = data.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = data.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      let body: unknown = data.slice(split + 4);
      try {
        body = JSON.parse(body as string);
      } catch {
        // not JSON: keep the text
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body });
    });
  });
}

type Tap = Pick<typeof t, 'equal' | 'same' | 'match' | 'ok'>;

/** The envelope with the slug, and the address's public bucket in the headers; returns X-RateLimit-Remaining. */
function assertAnswer(t: Tap, res: RawAnswer, status: number, slug: string, label: string): number {
  t.equal(res.status, status, `${label}: status ${status}`);
  t.same(Object.keys(res.body ?? {}).sort(), ['error', 'message', 'ok'], `${label}: envelope`);
  t.equal(res.body?.ok, false, `${label}: ok false`);
  t.equal(res.body?.error, slug, `${label}: slug ${slug}`);
  t.match(res.headers['content-type'], /^application\/json/, `${label}: JSON`);
  return assertRateHeaders(t, res, label);
}

function assertRateHeaders(t: Tap, res: RawAnswer, label: string): number {
  t.equal(res.headers['x-ratelimit-limit'], String(PUBLIC_LIMIT), `${label}: X-RateLimit-Limit of the address's public bucket`);
  const remaining = Number(res.headers['x-ratelimit-remaining']);
  t.ok(Number.isInteger(remaining) && remaining >= 0 && remaining < PUBLIC_LIMIT, `${label}: X-RateLimit-Remaining ${remaining}`);
  t.ok(Number(res.headers['x-ratelimit-reset']) >= 1, `${label}: X-RateLimit-Reset`);
  return remaining;
}

const head = (lines: string[]) => `${lines.join('\r\n')}\r\n\r\n`;

t.test('a body shorter than its Content-Length is answered 408 within the request timeout, not held', async (t) => {
  const { api, errors } = await start(t);
  const stalled = await exchange(
    'https',
    api.httpsPort,
    `${head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 100'])}{"email":`,
  );
  assertAnswer(t, stalled, 408, 'request_timeout', 'short body');
  t.match(stalled.body.message, /did not arrive in full in time/);
  t.equal(stalled.headers['connection'], 'close');

  // A client trickling its body (one byte per 100 ms of 100) is cut off at the request timeout (1 s) all the same.
  const slow = await exchange(
    'https',
    api.httpsPort,
    head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 100']),
    ' '.repeat(100),
  );
  assertAnswer(t, slow, 408, 'request_timeout', 'trickled body');

  const noHeaders = await exchange('https', api.httpsPort, 'GET /api/v1/whoami HTTP/1.1\r\nHost: x\r\n');
  assertAnswer(t, noHeaders, 408, 'request_timeout', 'headers that never end');

  const plain = await exchange('http', api.httpPort, 'GET /x HTTP/1.1\r\nHost: x\r\n');
  assertAnswer(t, plain, 408, 'request_timeout', 'HTTP listener: headers that never end');
  t.same(errors, [], 'nothing logged as an error');
});

t.test('an idle keep-alive connection is closed after the keep-alive timeout', async (t) => {
  const { api } = await start(t);
  // No Connection: close: the server keeps the connection for a next request, then closes it when none comes.
  const res = await exchange('https', api.httpsPort, head(['GET /api/v1/openapi.json HTTP/1.1', 'Host: x']));
  t.equal(res.status, 200, 'answered, and the connection closed by the server');
  t.match(res.headers['keep-alive'], /^timeout=\d+/, 'the timeout is announced');
});

t.test('oversized headers: 431 headers_too_large on both listeners', async (t) => {
  const { api } = await start(t);
  const big = head(['GET /api/v1/whoami HTTP/1.1', 'Host: x', `X-Padding: ${'a'.repeat(HEAD_LIMIT + 100)}`]);
  const https = await exchange('https', api.httpsPort, big);
  assertAnswer(t, https, 431, 'headers_too_large', 'HTTPS');
  t.match(https.body.message, new RegExp(`exceed ${HEAD_LIMIT} bytes`));
  assertAnswer(t, await exchange('http', api.httpPort, big), 431, 'headers_too_large', 'HTTP');
});

t.test("requests Node's parser refuses: 400 bad_request in the envelope", async (t) => {
  const { api, errors } = await start(t);
  const cases: [string, string, RegExp][] = [
    [
      'Content-Length not a number',
      head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: abc']),
      /Content-Length/,
    ],
    ['two Content-Lengths', `${head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Content-Length: 3'])}{}`, /Content-Length/],
    [
      'Content-Length with chunked',
      `${head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Length: 2', 'Transfer-Encoding: chunked'])}{}`,
      /Content-Length|Transfer-Encoding/,
    ],
    [
      'a bad chunk size',
      `${head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Transfer-Encoding: chunked'])}zz\r\n{}\r\n0\r\n\r\n`,
      /chunked/,
    ],
    ['not HTTP', 'HELLO THERE\r\n\r\n', /malformed/],
    ['a space in the header name', head(['GET /api/v1/whoami HTTP/1.1', 'Host: x', 'Bad Header: 1']), /malformed/],
    ['raw bytes', '\u0000\u0001\u0002\r\n\r\n', /malformed/],
  ];
  for (const [label, text, message] of cases) {
    for (const kind of ['https', 'http'] as const) {
      const res = await exchange(kind, kind === 'https' ? api.httpsPort : api.httpPort, text);
      if (kind === 'http' && label === 'a bad chunk size') {
        // The HTTP listener answers a good head at once and never reads the body: its 301, and nothing after it.
        t.equal(res.status, 301, 'http: a bad body after a good head: redirected');
        t.equal(res.body, '', 'http: no second answer after the redirect');
        continue;
      }
      assertAnswer(t, res, 400, 'bad_request', `${kind}: ${label}`);
      t.match(res.body.message, message, `${kind}: ${label}: the message says what is wrong`);
    }
  }
  t.same(errors, [], 'nothing logged as an error');
});

t.test('framework-level answers over a real socket: envelope and rate headers', async (t) => {
  const { api } = await start(t);
  const post = (body: string, extra: string[] = []) =>
    exchange(
      'https',
      api.httpsPort,
      head([
        'POST /api/v1/auth/login HTTP/1.1',
        'Host: x',
        'Connection: close',
        'Content-Type: application/json',
        `Content-Length: ${Buffer.byteLength(body)}`,
        ...extra,
      ]) + body,
    );

  const badUrl = await exchange('https', api.httpsPort, head(['GET /api/v1/whoami/%E0%A4%A HTTP/1.1', 'Host: x', 'Connection: close']));
  assertAnswer(t, badUrl, 400, 'bad_request', 'malformed percent-encoding');
  t.equal(badUrl.body.message, 'malformed URL');

  const malformed = await post('{"email": ');
  assertAnswer(t, malformed, 400, 'bad_request', 'malformed JSON');
  t.equal(malformed.body.message, 'malformed JSON body');

  const proto = await post('{"email":"a@b.test","password":"x","__proto__":{"admin":true}}');
  assertAnswer(t, proto, 400, 'bad_request', '__proto__');
  t.match(proto.body.message, /"__proto__" key/, 'the message names the forbidden key');
  const ctor = await post('{"email":"a@b.test","password":"x","constructor":{"prototype":{"admin":true}}}');
  assertAnswer(t, ctor, 400, 'bad_request', 'constructor.prototype');
  t.match(ctor.body.message, /"constructor" key/);

  const declaredTooLarge = await exchange(
    'https',
    api.httpsPort,
    head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Connection: close', 'Content-Type: application/json', `Content-Length: ${BODY_LIMIT + 1}`]),
  );
  assertAnswer(t, declaredTooLarge, 413, 'payload_too_large', 'Content-Length over the body limit');
  const sentTooLarge = await exchange(
    'https',
    api.httpsPort,
    head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Connection: close', 'Content-Type: application/json', 'Transfer-Encoding: chunked']) +
      `${(BODY_LIMIT + 10).toString(16)}\r\n${'x'.repeat(BODY_LIMIT + 10)}\r\n0\r\n\r\n`,
  );
  assertAnswer(t, sentTooLarge, 413, 'payload_too_large', 'a chunked body over the body limit');

  const deep = await post(`{"email":${'['.repeat(1500)}${']'.repeat(1500)}}`);
  assertAnswer(t, deep, 400, 'bad_request', 'nested 1,500 deep');
  t.match(deep.body.message, /deeper than 64 levels/);
});

t.test('the redirect and the listener answers count against the address, and say so', async (t) => {
  const { api } = await start(t);
  const redirect = await exchange('http', api.httpPort, head(['GET /api/v1/whoami?x=1 HTTP/1.1', 'Host: x']));
  t.equal(redirect.status, 301);
  t.equal(redirect.headers['location'], 'https://mail.example.test/api/v1/whoami?x=1');
  const afterRedirect = assertRateHeaders(t, redirect, '301');

  const overflow = head(['GET / HTTP/1.1', 'Host: x', `X-Padding: ${'a'.repeat(HEAD_LIMIT + 100)}`]);
  const seen = [afterRedirect];
  seen.push(assertAnswer(t, await exchange('https', api.httpsPort, overflow), 431, 'headers_too_large', '431'));
  seen.push(assertAnswer(t, await exchange('http', api.httpPort, 'HELLO\r\n\r\n'), 400, 'bad_request', '400'));
  seen.push(assertRateHeaders(t, await exchange('http', api.httpPort, head(['GET / HTTP/1.1', 'Host: x'])), 'another 301'));
  const login = await exchange('https', api.httpsPort, head(['GET /api/v1/openapi.json HTTP/1.1', 'Host: x', 'Connection: close']));
  t.equal(login.status, 200);
  seen.push(assertRateHeaders(t, login, 'a public route'));
  const stalled = await exchange(
    'https',
    api.httpsPort,
    `${head(['POST /api/v1/auth/login HTTP/1.1', 'Host: x', 'Content-Type: application/json', 'Content-Length: 10'])}{`,
  );
  t.equal(stalled.status, 408);
  seen.push(assertRateHeaders(t, stalled, 'a stalled body, counted by the route it reached'));
  t.same(
    seen,
    [0, 1, 2, 3, 4, 5].map((i) => afterRedirect - i),
    'one address bucket: each answer counted once, the routes share it',
  );
});
