// The mail log's bookkeeping: when a transaction's line is written and what it says, for the endings the process test does not drive (abandoned, every
// recipient refused, a close during DATA, STARTTLS mid-session).
import t from 'tap';
import { PassThrough } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { SMTPServerSession } from 'smtp-server';
import { createLogger } from '../../../shared/kernel/log.js';
import { observed, SessionLog } from '../../../mta/smtp/transaction-log.js';
import { smtpError } from '../../../mta/smtp/replies.js';

function setup(submission = false) {
  const out = new PassThrough();
  const lines: Record<string, unknown>[] = [];
  out.on('data', (c: Buffer) =>
    c
      .toString()
      .split('\n')
      .filter(Boolean)
      .forEach((l) => lines.push(JSON.parse(l))),
  );
  const session = { id: 'sess1', remoteAddress: '192.0.2.7', hostNameAppearsAs: 'client.example' } as unknown as SMTPServerSession;
  const log = new SessionLog(createLogger('info', out), session, submission);
  // The stream hands data on asynchronously: read the lines after a turn of the event loop.
  const read = async () => {
    await new Promise((r) => setImmediate(r));
    return lines;
  };
  return { log, read };
}

const OK = { code: 250, text: 'OK' };

t.test('a transaction left before DATA is logged as abandoned when the next MAIL comes, and the next one on its own', async (t) => {
  const { log, read } = setup();
  log.mail('a@x.example', OK);
  log.rcpt('b@y.example', OK);
  log.rcpt('B@y.example', OK);
  log.mail('c@x.example', OK);
  log.rcpt('d@y.example', OK);
  log.data({ code: 250, text: '2.0.0 Ok: queued as 42' }, 1234, { inbound_id: '42' });
  log.closed();
  const lines = await read();
  t.same(
    lines.map((l) => l['msg']),
    ['smtp transaction', 'smtp transaction'],
    'no connection line: the session had transactions',
  );
  t.match(lines[0], { from: 'a@x.example', rcpt: ['b@y.example'], outcome: 'abandoned', stage: 'rcpt', code: null, size: null }, 'a repeated recipient once');
  t.match(lines[1], {
    from: 'c@x.example',
    rcpt: ['d@y.example'],
    outcome: 'accepted',
    stage: 'data',
    code: 250,
    size: 1234,
    inbound_id: '42',
    session: 'sess1',
    client: '192.0.2.7',
    helo: 'client.example',
    tls: false,
  });
  t.notOk('key_id' in lines[0]!, 'the MX names no key');
});

t.test('every recipient refused, then QUIT: refused with the last refusal', async (t) => {
  const { log, read } = setup();
  log.mail('a@x.example', OK);
  log.rcpt('one@y.example', { code: 550, text: '5.1.1 no such recipient here' });
  log.rcpt('two@y.example', { code: 450, text: '4.2.1 try later' });
  log.closed();
  const [line] = await read();
  t.match(line, { outcome: 'refused', stage: 'rcpt', code: 450, reply: '4.2.1 try later', rcpt: [] });
  t.same(line!['rejected'], [
    { rcpt: 'one@y.example', code: 550, reply: '5.1.1 no such recipient here' },
    { rcpt: 'two@y.example', code: 450, reply: '4.2.1 try later' },
  ]);
});

t.test('a close while DATA is still being answered leaves the line to the answer', async (t) => {
  const { log, read } = setup();
  log.mail('a@x.example', OK);
  log.rcpt('b@y.example', OK);
  log.dataStarted();
  log.closed();
  t.same(await read(), [], 'nothing yet');
  log.data({ code: 451, text: '4.3.0 the message was not received in full' }, null);
  const lines = await read();
  t.equal(lines.length, 1, 'one line, no connection line');
  t.match(lines[0], { outcome: 'refused', stage: 'data', code: 451, rcpt: ['b@y.example'] });
});

t.test('submission: STARTTLS starts over, the key id follows AUTH, a session without a transaction ends on its last refusal', async (t) => {
  const { log, read } = setup(true);
  log.mail('early@x.example', OK);
  log.secured({ getProtocol: () => 'TLSv1.3', getCipher: () => ({ name: 'TLS_AES_128_GCM_SHA256' }) } as unknown as TLSSocket);
  log.authFailed({ code: 535, text: '5.7.8 Authentication credentials invalid' }, 'PLAIN', 'mp_live_abcdef');
  log.authenticated('key-1');
  log.closed();
  const lines = await read();
  t.same(
    lines.map((l) => l['msg']),
    ['smtp transaction', 'smtp auth failed'],
  );
  t.match(lines[0], { from: 'early@x.example', outcome: 'abandoned', tls: false, key_id: null }, 'the transaction before STARTTLS ends there');
  t.match(lines[1], { method: 'PLAIN', key_prefix: 'mp_live_abcdef', code: 535, tls: { protocol: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256' } });

  const second = setup(true);
  second.log.authFailed({ code: 535, text: 'no' }, 'LOGIN', null);
  second.log.closed();
  const [, gone] = await second.read();
  t.match(gone, { msg: 'smtp connection without transaction', auth_failures: 1, code: 535, key_id: null });
});

t.test('observed: the reply a handler gives, with the library default code for an error without one', async (t) => {
  const seen: { code: number; text: string }[] = [];
  const calls: unknown[][] = [];
  const callback = (...args: unknown[]) => void calls.push(args);
  observed(callback, (r) => seen.push(r))(null, '2.0.0 Ok: queued');
  observed(callback, (r) => seen.push(r))(smtpError(552, '5.3.4', 'too big'));
  observed(callback, (r) => seen.push(r), 450)(new Error('boom'));
  t.same(seen, [
    { code: 250, text: '2.0.0 Ok: queued' },
    { code: 552, text: '5.3.4 too big' },
    { code: 450, text: 'boom' },
  ]);
  t.equal(calls.length, 3, 'the callback is still called');
});
