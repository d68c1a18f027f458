// The api role's listeners: HTTPS API, HTTP→HTTPS 301 redirect, and the TLS certificate (self-signed once, or configured).
import t from 'tap';
import { stopOnTeardown } from '../helpers/net.js';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { loadConfig, type Env } from '../../shared/config/index.js';
import { connect, type Sql } from '../../shared/db/connection.js';
import { createLogger } from '../../shared/kernel/log.js';
import { redirectTarget, startApi, type RunningApi } from '../../api/server.js';
import { createTestDatabase } from '../helpers/db.js';
import { testEnv } from '../helpers/app.js';
import { startBoss, type Boss } from '../../shared/jobs/boss.js';
import { buildServices } from '../../main/services.js';
import { systemClock } from '../../shared/kernel/clock.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const log = createLogger('silent');
const PUBLIC_URL = 'https://mail.example.test:9443';

let sql: Sql;
let boss: Boss;
let databaseUrl: string;

t.before(async () => {
  const db = await createTestDatabase();
  databaseUrl = db.url;
  sql = connect(db.url, log, { max: 4 });
  boss = await startBoss(sql, log, { supervise: false });
  t.teardown(async () => {
    await boss.stop({ graceful: false, wait: true });
    await sql.end({ timeout: 5 });
    await db.drop();
  });
});

function tempDir(t: Teardown, prefix = 'mailpath-server-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the api role on free loopback ports; stopped at teardown unless the test stops it first. */
async function start(t: Teardown, dataDir: string, env: Env = {}): Promise<RunningApi> {
  const config = loadConfig(
    testEnv(databaseUrl, dataDir, {
      MAILPATH_HTTPS_PORT: '0',
      MAILPATH_HTTP_PORT: '0',
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_PUBLIC_URL: PUBLIC_URL,
      ...env,
    }),
  );
  const services = await buildServices({ config, sql, log, boss, clock: systemClock });
  t.teardown(() => services.close());
  return stopOnTeardown(t, await startApi(services));
}

interface HttpsAnswer {
  status: number;
  body: string;
  /** DER of the certificate the server presented. */
  certRaw: Buffer;
  alpn: string | false | null;
}

function httpsGet(port: number, path: string): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method: 'GET', rejectUnauthorized: false, agent: false, timeout: 10_000 }, (res) => {
      const socket = res.socket as import('node:tls').TLSSocket;
      const certRaw = socket.getPeerCertificate().raw;
      const alpn = socket.alpnProtocol;
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, certRaw, alpn }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

/** Sends raw bytes to a plain-HTTP port and returns the status line and headers of the answer. */
function rawHttp(port: number, text: string): Promise<{ statusLine: string; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = netConnect({ host: '127.0.0.1', port });
    let data = '';
    socket.setTimeout(10_000, () => socket.destroy(new Error('raw request timed out')));
    socket.on('connect', () => socket.write(text));
    socket.on('data', (d: Buffer) => (data += d.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = ''] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ statusLine, headers });
    });
  });
}

const pemToDer = (pem: string) => new X509Certificate(pem).raw;

t.test('redirectTarget keeps path and query on the public origin only', async (t) => {
  const pub = new URL(PUBLIC_URL);
  t.equal(redirectTarget(pub, '/api/v1/whoami?a=1&b=x%20y'), `${PUBLIC_URL}/api/v1/whoami?a=1&b=x%20y`);
  t.equal(redirectTarget(pub, undefined), `${PUBLIC_URL}/`);
  t.equal(redirectTarget(pub, '//evil.example/path?q=1'), `${PUBLIC_URL}//evil.example/path?q=1`, 'a protocol-relative path stays on our host');
  t.equal(redirectTarget(pub, 'http://evil.example/x?y=1'), `${PUBLIC_URL}/x?y=1`, 'absolute-form: only path and query kept');
  t.equal(redirectTarget(pub, '*'), `${PUBLIC_URL}/`);
});

t.test('plain HTTP is answered with 301 to the HTTPS address, same path and query', async (t) => {
  const api = await start(t, tempDir(t));
  t.ok(api.httpsPort > 0 && api.httpPort > 0 && api.httpsPort !== api.httpPort, 'both listeners on real ports');

  const get = await rawHttp(api.httpPort, 'GET /api/v1/whoami?x=1&y=two HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
  t.match(get.statusLine, /^HTTP\/1\.1 301 /);
  t.equal(get.headers['location'], `${PUBLIC_URL}/api/v1/whoami?x=1&y=two`);
  t.match(get.headers['x-ratelimit-limit'], /^\d+$/, "the redirect carries the address bucket's X-RateLimit-* headers");
  t.match(get.headers['x-ratelimit-remaining'], /^\d+$/);
  t.match(get.headers['x-ratelimit-reset'], /^\d+$/);

  const post = await rawHttp(api.httpPort, 'POST /api/v1/auth/login HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}');
  t.match(post.statusLine, /^HTTP\/1\.1 301 /, 'every method is redirected');
  t.equal(post.headers['location'], `${PUBLIC_URL}/api/v1/auth/login`);

  const sneaky = await rawHttp(api.httpPort, 'GET //evil.example/steal?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.equal(sneaky.headers['location'], `${PUBLIC_URL}//evil.example/steal?q=1`, 'never an open redirect');
  const proxyForm = await rawHttp(api.httpPort, 'GET http://evil.example/p?q=2 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
  t.equal(proxyForm.headers['location'], `${PUBLIC_URL}/p?q=2`, 'absolute-form target keeps only its path');
  const hostHeader = await rawHttp(api.httpPort, 'GET /a HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
  t.equal(hostHeader.headers['location'], `${PUBLIC_URL}/a`, 'the Host header does not choose the target');
});

t.test('HTTPS answers the API', async (t) => {
  const api = await start(t, tempDir(t));
  const doc = await httpsGet(api.httpsPort, '/api/v1/openapi.json');
  t.equal(doc.status, 200);
  const parsed = JSON.parse(doc.body) as { openapi: string; info: { version: string }; servers: { url: string }[] };
  t.equal(parsed.openapi, '3.0.3');
  t.equal(parsed.info.version, '1.0.0');
  t.equal(parsed.servers[0]?.url, `${PUBLIC_URL}/api/v1`, 'the server URL is the public URL');

  const missing = await httpsGet(api.httpsPort, '/api/v1/no-such-route');
  t.equal(missing.status, 404);
  t.same(JSON.parse(missing.body).error, 'not_found');

  await api.stop();
  await t.rejects(httpsGet(api.httpsPort, '/api/v1/openapi.json'), 'HTTPS closed after stop');
  await t.rejects(rawHttp(api.httpPort, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'), 'HTTP closed after stop');
});

t.test('the self-signed certificate is generated once into the data dir and reused', async (t) => {
  const dataDir = tempDir(t);
  const first = await start(t, dataDir);
  const certFile = join(dataDir, 'tls', 'cert.pem');
  const keyFile = join(dataDir, 'tls', 'key.pem');
  t.ok(existsSync(certFile) && existsSync(keyFile), 'cert.pem and key.pem written to <data dir>/tls');
  t.equal(statSync(keyFile).mode & 0o777, 0o600, 'the key is readable by the owner only');
  const certPem = readFileSync(certFile, 'utf8');
  const keyPem = readFileSync(keyFile, 'utf8');
  const cert = new X509Certificate(certPem);
  t.ok(cert.checkPrivateKey(await import('node:crypto').then((c) => c.createPrivateKey(keyPem))), 'the key matches the certificate');
  t.match(cert.subjectAltName, /DNS:localhost/);
  t.match(cert.subjectAltName, /DNS:mail\.example\.test/, 'names the public host');
  t.match(cert.subjectAltName, /IP Address:127\.0\.0\.1/);

  const answer1 = await httpsGet(first.httpsPort, '/api/v1/openapi.json');
  t.same(answer1.certRaw, pemToDer(certPem), 'the server presents the generated certificate');
  await first.stop();

  const second = await start(t, dataDir);
  t.equal(readFileSync(certFile, 'utf8'), certPem, 'cert.pem unchanged by the restart');
  t.equal(readFileSync(keyFile, 'utf8'), keyPem, 'key.pem unchanged by the restart');
  const answer2 = await httpsGet(second.httpsPort, '/api/v1/openapi.json');
  t.same(answer2.certRaw, answer1.certRaw, 'the same certificate is served after a restart');
});

t.test('MAILPATH_TLS_CERT / MAILPATH_TLS_KEY files are used when set', async (t) => {
  const certDir = tempDir(t, 'mailpath-certs-');
  const pair = await generate([{ name: 'commonName', value: 'configured.example.test' }], { keySize: 2048, algorithm: 'sha256' });
  const certFile = join(certDir, 'server.crt');
  const keyFile = join(certDir, 'server.key');
  writeFileSync(certFile, pair.cert);
  writeFileSync(keyFile, pair.private, { mode: 0o600 });

  const dataDir = tempDir(t);
  const api = await start(t, dataDir, { MAILPATH_TLS_CERT: certFile, MAILPATH_TLS_KEY: keyFile });
  const answer = await httpsGet(api.httpsPort, '/api/v1/openapi.json');
  t.equal(answer.status, 200);
  t.same(answer.certRaw, pemToDer(pair.cert), 'the configured certificate is presented');
  t.match(new X509Certificate(answer.certRaw).subject, /CN=configured\.example\.test/);
  t.notOk(existsSync(join(dataDir, 'tls')), 'no self-signed certificate generated');

  await t.rejects(
    start(t, tempDir(t), { MAILPATH_TLS_CERT: join(certDir, 'missing.crt'), MAILPATH_TLS_KEY: keyFile }),
    /ENOENT/,
    'a missing certificate file stops the start',
  );
});
