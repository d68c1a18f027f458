// Parsing stored messages: the full view of a composed message, and the headers-only view past the size cap or on a broken body.
import t from 'tap';
import { parseStoredMessage } from '../../../../shared/inbound/workspace-mailboxes/parse.js';
import { composeInbound } from '../../../helpers/inbound-rows.js';

const trace = Buffer.from('Authentication-Results: mx.test; spf=pass\r\nAuthentication-Results: forged.example; dkim=pass\r\n');

t.test('a composed message: addresses, bodies, attachments without content, both Authentication-Results in order', async (t) => {
  const raw = Buffer.concat([trace, await composeInbound({ to: 'Inbox <inbox@acme.example>', cc: 'undisclosed-recipients:;', subject: 'Hi' })]);
  const v = await parseStoredMessage(raw);
  t.equal(v.body_parsed, true);
  t.same(v.from, [{ name: 'Alice Sender', address: 'alice@sender.example' }]);
  t.same(v.to, [{ name: 'Inbox', address: 'inbox@acme.example' }]);
  t.same(v.cc, [], 'an empty group has no members');
  t.equal(v.subject, 'Hi');
  t.equal(v.text, 'Hello,\nthe report is attached.\n');
  t.match(v.html, /cid:logo@example\.org/, 'cid links kept, not inlined as data: URLs');
  t.same(
    v.attachments.map((a) => [a.filename, a.content_type, a.size, a.content_id]),
    [
      ['logo.png', 'image/png', 8, 'logo@example.org'],
      ['report.pdf', 'application/pdf', 23, null],
    ],
  );
  t.same(v.authentication_results, ['mx.test; spf=pass', 'forged.example; dkim=pass'], 'ours first, then what came with the message');
  t.equal(v.headers[0]!.name, 'Authentication-Results');
});

t.test('over the cap only the headers are read; bodies and attachments stay empty', async (t) => {
  const raw = await composeInbound({ subject: 'Big one' });
  const v = await parseStoredMessage(raw, 100);
  t.equal(v.body_parsed, false);
  t.equal(v.subject, 'Big one');
  t.same(v.from, [{ name: 'Alice Sender', address: 'alice@sender.example' }]);
  t.equal(v.text, null);
  t.equal(v.html, null);
  t.same(v.attachments, []);
  t.ok(v.headers.some((h) => h.name === 'Content-Type'));
});

t.test('odd input still yields a view: LF line ends, no body, no header block end', async (t) => {
  const lf = await parseStoredMessage(Buffer.from('From: a@b.example\nSubject: lf only\n\nbody\n'));
  t.equal(lf.subject, 'lf only');
  t.equal(lf.text, 'body\n');
  const headersOnly = await parseStoredMessage(Buffer.from('Subject: no body'), 5);
  t.equal(headersOnly.subject, 'no body');
  t.equal(headersOnly.body_parsed, false);
  const empty = await parseStoredMessage(Buffer.alloc(0));
  t.same([empty.subject, empty.text, empty.from, empty.date], [null, null, [], null]);
  const badDate = await parseStoredMessage(Buffer.from('Date: not a date\r\nSubject: x\r\n\r\nhi\r\n'));
  t.equal(badDate.date, null, 'an unreadable Date is null');
});

t.test('invalid UTF-8 and NUL bytes in headers and body still yield a view that serializes', async (t) => {
  const raw = Buffer.concat([
    Buffer.from('From: Bad \xff\xfe Bytes <bad@sender.example>\r\nSubject: caf', 'latin1'),
    Buffer.from([0xc3, 0x28, 0x20, 0x00, 0x21]),
    Buffer.from('\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nbody \0 with NUL and \xc0\xaf overlong\r\n', 'latin1'),
  ]);
  const v = await parseStoredMessage(raw);
  t.match(v.subject, /^caf/);
  t.match(v.from, [{ address: 'bad@sender.example' }]);
  t.match(v.text, /^body .* with NUL and .* overlong/);
  t.doesNotThrow(() => JSON.parse(JSON.stringify(v)), 'JSON round trip');
});
