// The MX pregreet test on loopback: a client talking before the 220 is dropped (421, logged, nothing stored), a patient one is greeted and remembered, 0
// turns it off; and the remembered addresses' expiry and caps.
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { PregreetTest } from '../../../mta/inbound/pregreet.js';
import { loadMailpathConfig as loadConfig } from '../../../main/config.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { MX_HOST, NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from './fixtures.js';

/** A logger whose records the test can read. */
function capturingLog() {
  const records: { level: number; msg: string; remote?: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) records.push(JSON.parse(line));
      done();
    },
  });
  return { log: createLogger('debug', sink), records };
}

const passes = (records: { msg: string }[]) => records.filter((r) => r.msg === 'mx pregreet test: passed').length;

/** Connects and writes `data` at once, without waiting for any greeting; resolves with everything received until the server closes. */
function talkAtOnce(port: number, data: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect({ host: '127.0.0.1', port }, () => socket.write(data));
    socket.setTimeout(15_000, () => socket.destroy(new Error('the server did not close the connection')));
    socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve(received) : reject(err)));
    socket.on('close', () => resolve(received));
  });
}

t.test('as shipped: a 1 s pause for addresses not seen for a day; bad values refused', async (t) => {
  const c = loadConfig({});
  t.match(c.inbound.server, { greeting_delay_ms: 0, pregreet_wait_ms: 1000, pregreet_ttl_seconds: 86400 });
  t.throws(() => loadConfig({ MAILPATH_CONFIG__INBOUND__SERVER__PREGREET_WAIT_MS: '-1' }), /config\/inbound\.server\.pregreet_wait_ms/);
  t.throws(() => loadConfig({ MAILPATH_CONFIG__INBOUND__SERVER__PREGREET_TTL_SECONDS: 'x' }), /config\/inbound\.server\.pregreet_ttl_seconds/);
  t.throws(
    () => loadConfig({ MAILPATH_CONFIG__INBOUND__SERVER__SOCKET_TIMEOUT_MS: '1000' }),
    /config\/inbound\.server: greeting_delay_ms and pregreet_wait_ms must be shorter than socket_timeout_ms/,
    'the client is silent in the pause',
  );
});

t.test('through real sockets, with the shipped pause', async (t) => {
  const captured = capturingLog();
  const { port, sql } = await startTestMx(t, { log: captured.log });
  const acme = await tenantDomain(sql);
  const body = message({ From: 'a@sender.example', To: `hello@${acme.name}`, Subject: 'early' });

  await t.test('a client talking before the greeting is told 421 and dropped before any hook runs; nothing stored; logged', async (t) => {
    const received = await talkAtOnce(
      port,
      `EHLO eager.example\r\nMAIL FROM:<a@sender.example>\r\nRCPT TO:<hello@${acme.name}>\r\nDATA\r\n${body}.\r\nQUIT\r\n`,
    );
    t.match(
      received,
      new RegExp(`^421 4\\.5\\.0 ${MX_HOST.replace(/\./g, '\\.')} protocol error: talked before the greeting, closing connection\\r\\n$`),
      'one reply: no 220, nothing answered after it',
    );
    t.same(await storedCounts(sql), NOTHING_STORED);
    t.match(
      captured.records.find((r) => r.msg === 'mx pregreet test: dropped a client that talked before the greeting'),
      { level: 30, remote: '127.0.0.1' },
    );
    t.equal(passes(captured.records), 0, 'an early talker does not pass');
    // Even a byte without a line end counts: the library alone only notices whole commands.
    t.match(await talkAtOnce(port, 'E'), /^421 4\.5\.0 /);
  });

  await t.test('a patient client is greeted after the pause and passes; the next connection from its address skips the test', async (t) => {
    const first = await RawSmtpClient.open(port);
    t.equal(first.greeting.code, 220);
    t.equal(passes(captured.records), 1, 'passed the test');
    t.match(await first.client.command('EHLO patient.example'), { code: 250 });
    await first.client.quit();

    const second = await RawSmtpClient.open(port);
    t.equal(second.greeting.code, 220, 'greeted');
    t.equal(passes(captured.records), 1, 'without taking the test again: no pause');
    t.match(await second.client.command('EHLO patient.example'), { code: 250 });
    t.match(await second.client.command('MAIL FROM:<a@sender.example>'), { code: 250 });
    t.match(await second.client.command(`RCPT TO:<hello@${acme.name}>`), { code: 250 });
    t.match(await second.client.command('DATA'), { code: 354 });
    t.match(await second.client.command(`${body}.`), { code: 250 });
    await second.client.quit();
  });
});

t.test('pregreet_wait_ms 0 turns the test off: greeted without it, nothing remembered', async (t) => {
  const captured = capturingLog();
  const { port } = await startTestMx(t, { log: captured.log, env: { MAILPATH_CONFIG__INBOUND__SERVER__PREGREET_WAIT_MS: '0' } });
  for (let i = 0; i < 2; i++) {
    const { client, greeting } = await RawSmtpClient.open(port);
    t.equal(greeting.code, 220);
    await client.quit();
  }
  t.equal(passes(captured.records), 0, 'no test was taken');
});

t.test('connections of one address in the pause are capped at max_clients_per_address', async (t) => {
  const { port } = await startTestMx(t, {
    env: { MAILPATH_CONFIG__INBOUND__SERVER__MAX_CLIENTS_PER_ADDRESS: '1', MAILPATH_CONFIG__INBOUND__SERVER__PREGREET_WAIT_MS: '5000' },
  });
  const waiting = connect({ host: '127.0.0.1', port });
  t.teardown(() => waiting.destroy());
  await new Promise<void>((resolve) => waiting.once('connect', () => resolve()));
  const second = await RawSmtpClient.open(port);
  t.match(second.greeting, { code: 421, text: '4.7.0 too many connections from your address, try again later' });
  second.client.destroy();
});

t.test('PregreetTest: a pass lasts the TTL, 0 TTL remembers nothing, 0 wait tests nothing, the pause is capped per address', async (t) => {
  let now = 1_000_000;
  const test = new PregreetTest({ waitMs: 1000, ttlMs: 60_000, maxWaitingPerAddress: 2, now: () => now });
  t.ok(test.mustWait('192.0.2.1'));
  test.pass('192.0.2.1');
  t.notOk(test.mustWait('192.0.2.1'), 'greeted at once after a pass');
  t.ok(test.mustWait('192.0.2.2'), 'another address still waits');
  now += 59_999;
  t.notOk(test.mustWait('192.0.2.1'));
  now += 1;
  t.ok(test.mustWait('192.0.2.1'), 'the pass has expired');

  t.ok(test.enter('192.0.2.3'));
  t.ok(test.enter('192.0.2.3'));
  t.notOk(test.enter('192.0.2.3'), 'a third connection of the address in the pause');
  t.ok(test.enter('192.0.2.4'), 'other addresses are not affected');
  test.leave('192.0.2.3');
  t.ok(test.enter('192.0.2.3'), 'a slot freed');

  const forgetful = new PregreetTest({ waitMs: 1000, ttlMs: 0, maxWaitingPerAddress: 1, now: () => now });
  forgetful.pass('192.0.2.1');
  t.ok(forgetful.mustWait('192.0.2.1'), 'TTL 0: every connection waits');
  const off = new PregreetTest({ waitMs: 0, ttlMs: 60_000, maxWaitingPerAddress: 1, now: () => now });
  t.notOk(off.mustWait('192.0.2.1'), 'wait 0: no test');
});

t.test('PregreetTest remembers at most 100000 addresses, forgetting the oldest pass first', async (t) => {
  const test = new PregreetTest({ waitMs: 1000, ttlMs: 60_000, maxWaitingPerAddress: 1, now: () => 0 });
  for (let i = 0; i <= 100_000; i++) test.pass(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  t.ok(test.mustWait('10.0.0.0'), 'the first pass was forgotten');
  t.notOk(test.mustWait('10.0.0.1'));
  t.notOk(test.mustWait('10.1.134.160'), 'the last one is kept');
});
