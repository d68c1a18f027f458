// Bad input at the MX: malformed commands, bare LF and end-of-data smuggling, long lines, NUL bytes, invalid UTF-8 headers, a 100 MB DATA, 1,000 RCPTs,
// silent clients; each gets the right reply, and whatever was answered 250 is stored byte for byte.
import t from 'tap';
import { RawSmtpClient, type SmtpReply } from '../../helpers/smtp-client.js';
import { NOTHING_STORED, startTestMx, storedCounts, tenantDomain, type TestMx } from './fixtures.js';

const mx = await startTestMx(t);
const acme = await tenantDomain(mx.sql, { mailboxes: ['ann'] });
const ANN = `ann@${acme.name}`;

/** EHLO, MAIL FROM and RCPT TO on a fresh connection of `server`; the client is left before DATA. */
async function open(server: TestMx = mx, rcpt = ANN): Promise<RawSmtpClient> {
  const { client } = await RawSmtpClient.open(server.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<sender@sender.example>');
  const reply = await client.command(`RCPT TO:<${rcpt}>`);
  if (reply.code !== 250) throw new Error(`RCPT refused: ${reply.code} ${reply.text}`);
  return client;
}

/** The stored bytes of the message a 250 named, after our Received and Authentication-Results headers. */
async function storedBody(reply: SmtpReply, server: TestMx = mx): Promise<Buffer> {
  const id = /queued as ([0-9a-f-]{36})/.exec(reply.text)?.[1];
  if (!id) throw new Error(`no queue id in ${reply.code} ${reply.text}`);
  const [row] = await server.sql<{ raw: Buffer }[]>`select raw from inbound_messages where id = ${id}`;
  const raw = row!.raw;
  // Our two header fields end where the client's first line starts: after the Authentication-Results field.
  const text = raw.toString('latin1');
  const ar = text.indexOf('\r\nAuthentication-Results:');
  const end = text.slice(ar + 2).search(/\r\n(?![ \t])/);
  return raw.subarray(ar + 2 + end + 2);
}

/** DATA, the bytes as given (already dot-stuffed by the caller when needed), the final dot; the reply. */
async function data(client: RawSmtpClient, bytes: Buffer | string): Promise<SmtpReply> {
  const go = await client.command('DATA');
  if (go.code !== 354) return go;
  await client.send(bytes);
  return client.command('.');
}

t.test('malformed commands get 5xx replies and the session stays usable', async (t) => {
  const { client } = await RawSmtpClient.open(mx.port);
  const expect = async (line: string, code: number) => t.equal((await client.command(line)).code, code, JSON.stringify(line));
  await expect('HELO', 501);
  await expect('EHLO', 501);
  await expect('MAIL FROM:<x@sender.example>', 503); // before EHLO
  await expect('EHLO client.example', 250);
  await expect('RCPT TO:<x@y.example>', 503); // before MAIL
  await expect('DATA', 503);
  await expect('MAIL FROM:sender@sender.example', 501); // no angle brackets
  await expect('MAIL FROM:<sender@sender.example', 501);
  await expect('MAIL FROM:<a\0b@sender.example>', 501);
  await expect('XYZZY', 500);
  await expect('\0\0\0', 500);
  await expect('MAIL FROM:<sender@sender.example>', 250);
  await expect('MAIL FROM:<again@sender.example>', 503); // nested
  await expect('RCPT TO:<>', 501);
  await expect('RCPT TO:', 501);
  await expect(`RCPT TO:<ann\0@${acme.name}>`, 501);
  await expect(`RCPT TO:<${ANN}>`, 250);
  const done = await data(client, 'Subject: after the noise\r\n\r\nstill fine\r\n');
  t.equal(done.code, 250, 'a proper transaction goes through after them');
  t.equal((await storedBody(done)).toString(), 'Subject: after the noise\r\n\r\nstill fine\r\n');
  await client.quit();
});

t.test('a command line far over the limit ends the session with 421; nothing stored', async (t) => {
  const before = await storedCounts(mx.sql);
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  const reply = await client.command(`MAIL FROM:<${'x'.repeat(20_000)}@sender.example>`);
  t.equal(reply.code, 421);
  await t.rejects(client.command('NOOP'), /connection closed/, 'the server hung up');
  t.same(await storedCounts(mx.sql), before);
});

t.test('ten unrecognized commands in a row end the session with 421', async (t) => {
  const { client } = await RawSmtpClient.open(mx.port);
  const codes = [];
  for (let i = 0; i < 10; i++) codes.push((await client.command(`BOGUS${i}`)).code);
  t.same(codes, [500, 500, 500, 500, 500, 500, 500, 500, 500, 421]);
  client.destroy();
});

t.test('bare LF line endings inside a message are kept as sent', async (t) => {
  const client = await open();
  const body = 'Subject: bare LF\nFrom: a@sender.example\n\nline one\nline two\r\nmixed\nlast\r\n';
  const done = await data(client, body);
  await client.quit();
  t.equal(done.code, 250);
  t.equal((await storedBody(done)).toString(), body, 'byte for byte');
});

t.test('end-of-data lookalikes (LF.LF, LF.CRLF, CR.CR LF) do not end DATA: no command can be smuggled in', async (t) => {
  const smuggled = `MAIL FROM:<evil@sender.example>\r\nRCPT TO:<${ANN}>\r\nDATA\r\nSubject: smuggled\r\n\r\nx\r\n`;
  for (const fake of ['\n.\n', '\n.\r\n', '\r.\r\n', '\r\n.\n']) {
    const before = (await storedCounts(mx.sql))['inbound_messages']!;
    const client = await open();
    const body = `Subject: innocent\r\n\r\nhello${fake}${smuggled}`;
    const done = await data(client, body);
    // A smuggled transaction would have produced more replies: the next command's answer must be QUIT's.
    const quit = await client.command('QUIT');
    client.destroy();
    t.equal(done.code, 250, JSON.stringify(fake));
    t.equal(quit.code, 221, 'no further replies were pending: nothing ran as a command');
    t.equal((await storedCounts(mx.sql))['inbound_messages'], before + 1, 'one message, not two');
    t.equal((await storedBody(done)).toString(), body, 'the lookalike and what follows are content');
  }
});

t.test('lines over 998 characters are accepted and kept whole by default', async (t) => {
  const client = await open();
  const body = `Subject: long\r\nX-Long: ${'h'.repeat(3000)}\r\n\r\n${'b'.repeat(10_000)}\r\n`;
  const done = await data(client, body);
  await client.quit();
  t.equal(done.code, 250);
  t.equal((await storedBody(done)).toString(), body);
});

t.test('NUL bytes and invalid UTF-8 in headers and body: stored byte for byte, header summary readable', async (t) => {
  const client = await open();
  const body = Buffer.concat([
    Buffer.from('From: Bad \xff\xfe Bytes <bad@sender.example>\r\nSubject: caf', 'latin1'),
    Buffer.from([0xc3, 0x28, 0x20, 0x00, 0x21]), // an invalid UTF-8 sequence, a NUL
    Buffer.from('\r\nMessage-ID: <nul\0id@sender.example>\r\n\r\nbody \0 with NUL and \xc0\xaf overlong\r\n', 'latin1'),
  ]);
  const done = await data(client, body);
  await client.quit();
  t.equal(done.code, 250);
  t.ok((await storedBody(done)).equals(body), 'every byte kept');
  const id = /queued as (\S+)/.exec(done.text)![1]!;
  const [row] = await mx.sql<{ subject: string; header_from: string }[]>`select subject, header_from from inbound_messages where id = ${id}`;
  t.notMatch(row!.subject, /\0/, 'no NUL reaches a text column');
  t.match(row!.subject, /^caf/);
  t.match(row!.header_from, /<bad@sender\.example>$/);
  const [copy] = await mx.sql<{ subject: string }[]>`select subject from mailbox_messages where inbound_message_id = ${id}`;
  t.equal(copy!.subject, row!.subject, 'the mailbox copy is there too');
});

t.test('a 100 MB DATA without SIZE: read to its end, refused 552 5.3.4, nothing stored, the session goes on', async (t) => {
  const before = await storedCounts(mx.sql);
  const client = await open();
  t.equal((await client.command('DATA')).code, 354);
  await client.send('Subject: huge\r\n\r\n');
  const line = Buffer.from(`${'z'.repeat(1022)}\r\n`);
  const chunk = Buffer.concat(new Array(1024).fill(line)); // 1 MiB
  for (let i = 0; i < 100; i++) await client.send(chunk);
  const over = await client.command('.');
  t.equal(over.code, 552);
  t.match(over.text, /^5\.3\.4 message exceeds the fixed maximum message size of 26214400 bytes/);
  t.same(await storedCounts(mx.sql), before, 'nothing stored');
  t.equal((await client.command('MAIL FROM:<sender@sender.example>')).code, 250, 'the session is still usable');
  t.equal((await client.command(`RCPT TO:<${ANN}>`)).code, 250);
  t.equal((await data(client, 'Subject: small\r\n\r\nok\r\n')).code, 250);
  await client.quit();

  const { client: declared } = await RawSmtpClient.open(mx.port);
  await declared.command('EHLO client.example');
  const refused = await declared.command(`MAIL FROM:<sender@sender.example> SIZE=${100 * 1024 * 1024}`);
  t.equal(refused.code, 552, 'declared up front: refused at MAIL, before any byte is sent');
  t.match(refused.text, /^5\.3\.4 /);
  await declared.quit();
});

t.test('1,000 RCPTs (pipelined): the first 100 accepted, the rest 452 4.5.3; the message is stored for those 100', async (t) => {
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<list@sender.example>');
  client.write(Array.from({ length: 1000 }, (_, i) => `RCPT TO:<r${i}@${acme.name}>\r\n`).join(''));
  const codes: number[] = [];
  for (let i = 0; i < 1000; i++) codes.push((await client.read()).code);
  t.equal(codes.filter((c) => c === 250).length, 100);
  t.ok(
    codes.slice(0, 100).every((c) => c === 250),
    'the first 100 in order',
  );
  t.ok(
    codes.slice(100).every((c) => c === 452),
    'then 452 for each of the rest',
  );
  const done = await data(client, 'Subject: to many\r\n\r\nhi\r\n');
  await client.quit();
  t.equal(done.code, 250);
  const id = /queued as (\S+)/.exec(done.text)![1]!;
  const [n] = await mx.sql<{ n: number }[]>`select count(*)::int as n from inbound_recipients where message_id = ${id}`;
  t.equal(n!.n, 100);
});

t.test(
  'silent clients are cut by the idle timeout, trickling ones (slow-loris) by the session time limit: 421, and a message cut mid-DATA leaves nothing',
  async (t) => {
    // No pregreet pause: it must be shorter than the idle timeout.
    const strict = await startTestMx(t, {
      env: {
        MAILPATH_CONFIG__INBOUND__SERVER__SOCKET_TIMEOUT_MS: '1000',
        MAILPATH_CONFIG__INBOUND__SERVER__MAX_SESSION_MS: '3000',
        MAILPATH_CONFIG__INBOUND__SERVER__PREGREET_WAIT_MS: '0',
      },
    });
    const d = await tenantDomain(strict.sql);

    const { client: silent } = await RawSmtpClient.open(strict.port);
    const idle = await silent.read();
    t.equal(idle.code, 421, 'silent after the greeting: 421');
    t.match(idle.text, /Timeout/);
    await t.rejects(silent.command('NOOP'), /connection closed/);

    const client = await open(strict, `x@${d.name}`);
    t.equal((await client.command('DATA')).code, 354);
    await client.send('Subject: slow\r\n\r\nthe first line\r\n');
    const cut = await client.read();
    t.equal(cut.code, 421, 'silent in the middle of DATA: 421 and closed');
    t.same(await storedCounts(strict.sql), NOTHING_STORED, 'the unfinished message left no row and no job');

    // One byte every 300 ms keeps the idle timeout (1 s) from ever firing: the session limit (3 s) ends it.
    const loris = await open(strict, `x@${d.name}`);
    t.equal((await loris.command('DATA')).code, 354);
    const trickle = (async () => {
      for (const byte of `Subject: slow-loris\r\n\r\n${'z'.repeat(200)}`) {
        try {
          await loris.send(byte);
        } catch {
          return;
        }
        await new Promise((r) => setTimeout(r, 300));
      }
    })();
    const limit = await loris.read();
    await trickle;
    t.equal(limit.code, 421, 'cut');
    t.match(limit.text, /^4\.4\.2 .*session time limit reached/, 'by the session limit, not the idle timeout: bytes kept arriving');
    t.same(await storedCounts(strict.sql), NOTHING_STORED, 'nothing stored');

    // Harmless commands forever (each answered, so never idle) meet the same limit.
    const { client: chatty } = await RawSmtpClient.open(strict.port);
    let last = 250;
    for (let i = 0; i < 40 && last === 250; i++) {
      last = await chatty.command('NOOP').then(
        (r) => r.code,
        () => 0,
      );
      await new Promise((r) => setTimeout(r, 200));
    }
    t.ok(last === 421 || last === 0, `NOOPs every 200 ms end with the session limit (${last})`);
    chatty.destroy();
  },
);

t.test('max_line_length set to 998: a longer line is refused at the end of DATA with 552 5.3.4', async (t) => {
  const strict = await startTestMx(t, { env: { MAILPATH_CONFIG__INBOUND__LIMITS__MAX_LINE_LENGTH: '998' } });
  const d = await tenantDomain(strict.sql);
  const client = await open(strict, `x@${d.name}`);
  const refused = await data(client, `Subject: long\r\n\r\n${'b'.repeat(999)}\r\n`);
  t.equal(refused.code, 552);
  t.match(refused.text, /^5\.3\.4 a line of the message is longer than 998 bytes/);
  t.equal((await client.command('MAIL FROM:<s@sender.example>')).code, 250);
  t.equal((await client.command(`RCPT TO:<x@${d.name}>`)).code, 250);
  const fine = await data(client, `Subject: exactly\r\n\r\n${'b'.repeat(998)}\r\n`);
  t.equal(fine.code, 250, '998 is fine');
  await client.quit();
  t.equal((await storedCounts(strict.sql))['inbound_messages'], 1);
});

t.test('one client address holds at most max_clients_per_address connections: the next is told 421 4.7.0, and a slot frees when one closes', async (t) => {
  const capped = await startTestMx(t, { env: { MAILPATH_CONFIG__INBOUND__SERVER__MAX_CLIENTS_PER_ADDRESS: '2' } });
  const first = await RawSmtpClient.open(capped.port);
  const second = await RawSmtpClient.open(capped.port);
  t.equal(first.greeting.code, 220);
  t.equal(second.greeting.code, 220);
  const third = await RawSmtpClient.open(capped.port);
  t.equal(third.greeting.code, 421, 'the third connection from the same address');
  t.match(third.greeting.text, /4\.7\.0 too many connections/);
  third.client.destroy();
  await first.client.quit();
  // The server counts the slot free once it has seen the close: retry a bounded number of times.
  let again = await RawSmtpClient.open(capped.port);
  for (let i = 0; i < 20 && again.greeting.code !== 220; i++) {
    again.client.destroy();
    await new Promise((r) => setTimeout(r, 50));
    again = await RawSmtpClient.open(capped.port);
  }
  t.equal(again.greeting.code, 220, 'after one closes, a new connection is welcome');
  t.equal((await again.client.command('EHLO client.example')).code, 250);
  await again.client.quit();
  await second.client.quit();
});

t.test('MAIL FROM and RCPT TO parameters of extensions not offered are refused with 555 5.5.4; the offered ones pass', async (t) => {
  const { client } = await RawSmtpClient.open(mx.port);
  t.equal((await client.command('EHLO client.example')).code, 250);
  const dsn = await client.command('MAIL FROM:<sender@sender.example> RET=HDRS');
  t.equal(dsn.code, 555, 'RET (DSN is not offered)');
  t.match(dsn.text, /^5\.5\.4 MAIL FROM parameter RET/);
  t.equal((await client.command('MAIL FROM:<sender@sender.example> X-UNKNOWN=1')).code, 555, 'an unknown parameter');
  t.equal((await client.command('MAIL FROM:<sender@sender.example> SIZE=100 BODY=8BITMIME SMTPUTF8')).code, 250, 'SIZE, BODY and SMTPUTF8 are offered');
  const notify = await client.command(`RCPT TO:<${ANN}> NOTIFY=NEVER`);
  t.equal(notify.code, 555, 'NOTIFY (DSN is not offered)');
  t.match(notify.text, /^5\.5\.4 RCPT TO parameter NOTIFY/);
  t.equal((await client.command(`RCPT TO:<${ANN}>`)).code, 250, 'the same recipient without the parameter');
  await client.quit();
});
