// The pure parts of submission: preparing a message (Bcc, Message-ID, Date, one From) and the replies for the outbound path's refusals.
import t from 'tap';
import { prepareMessage, rfc5322Date } from '../../../mta/submission/message.js';
import { replyForAppError, replyForRefusal } from '../../../mta/submission/replies.js';
import { AppError, validationError } from '../../../shared/kernel/errors.js';

const now = new Date('2025-03-04T05:06:07Z');
const prepare = (text: string | Buffer) =>
  prepareMessage(Buffer.isBuffer(text) ? text : Buffer.from(text), { hostname: 'mx.mailpath.test', now, maxSubjectLength: 998 });

t.test('adds Message-ID and Date when missing, strips Bcc, keeps every other byte', async (t) => {
  const original =
    'From: "Ann Example" <Ann@Example.COM>\r\n' +
    'To: bob@dest.example\r\n' +
    'Bcc: secret@hidden.example,\r\n\tother@hidden.example\r\n' +
    'Subject: =?utf-8?q?caf=C3=A9?= menu\r\n' +
    'X-Odd:   spacing kept  \r\n' +
    '\r\n' +
    'Body line\r\nBcc: not a header, body text\r\n';
  const m = await prepare(original);
  const text = m.bytes.toString();
  t.match(m.messageId, /^[0-9a-f-]{36}@mx\.mailpath\.test$/);
  t.ok(text.startsWith(`Message-ID: <${m.messageId}>\r\nDate: Tue, 04 Mar 2025 05:06:07 +0000\r\n`));
  t.notMatch(text, /secret@hidden|other@hidden/);
  const expectedRest = original.replace('Bcc: secret@hidden.example,\r\n\tother@hidden.example\r\n', '');
  t.equal(text.slice(text.indexOf('From:')), expectedRest, 'the rest is unchanged, body Bcc line included');
  t.same(m.from, { address: 'ann@example.com', name: 'Ann Example' });
  t.equal(m.subject, 'café menu');
});

t.test('keeps a Message-ID and Date the client set', async (t) => {
  const original = 'Date: Mon, 1 Jan 2024 00:00:00 +0100\r\nMessage-ID: <abc.123@client.example>\r\nFrom: a@b.example\r\n\r\nhi\r\n';
  const m = await prepare(original);
  t.equal(m.messageId, 'abc.123@client.example');
  t.equal(m.bytes.toString(), original);
  t.same(m.from, { address: 'a@b.example' });
  t.equal(m.subject, '');
});

t.test('a message with bare LF line endings or no body still splits correctly', async (t) => {
  const lf = await prepare('From: a@b.example\nSubject: x\n\nbody\n');
  t.match(lf.bytes.toString(), /\r\nFrom: a@b\.example\nSubject: x\n\nbody\n$/);
  const headersOnly = await prepare('From: a@b.example\r\nSubject: only');
  t.match(headersOnly.bytes.toString(), /Subject: only\r\n\r\n$/);
  t.equal(headersOnly.subject, 'only');
});

t.test('refuses a message without exactly one valid From address', async (t) => {
  await t.rejects(prepare('To: x@y.example\r\n\r\nbody'), { responseCode: 550, message: /^5\.6\.0 .*no From/ });
  await t.rejects(prepare('From: a@b.example\r\nFrom: c@d.example\r\n\r\nbody'), { responseCode: 550, message: /more than one From/ });
  await t.rejects(prepare('From: a@b.example, c@d.example\r\n\r\nbody'), {
    responseCode: 550,
    message: /^5\.6\.0 the From header has a second mailbox after the address: only one mailbox/,
  });
  await t.rejects(prepare('From: undisclosed:;\r\n\r\nbody'), { responseCode: 550, message: /^5\.6\.0 the From header has group syntax/ });
  await t.rejects(prepare('From: "x" <a b@c.example>\r\n\r\nbody'), { responseCode: 550, message: /^5\.(1\.7|6\.0) / });
  await t.rejects(prepare('\r\nFrom: a@b.example\r\n'), { responseCode: 550, message: /no From/ });
  await t.rejects(prepare('From: a@b.example\r\nMessage-ID: nothing\r\n\r\nx'), { responseCode: 550, message: /Message-ID/ });
});

t.test('From: the plain forms are read strictly, display names decoded (encoded words, quoted text that looks like an address)', async (t) => {
  const cases: [string, { address: string; name?: string }][] = [
    ['news@shop.example', { address: 'news@shop.example' }],
    ['<News@Shop.example>', { address: 'news@shop.example' }],
    ['=?utf-8?q?caf=C3=A9?= <news@shop.example>', { address: 'news@shop.example', name: 'café' }],
    ['"CEO <ceo@evil.example>" <news@shop.example>', { address: 'news@shop.example', name: 'CEO <ceo@evil.example>' }],
    ['John Q. Public <news@shop.example>', { address: 'news@shop.example', name: 'John Q. Public' }],
    ['"a \\"b\\"" <news@shop.example>', { address: 'news@shop.example', name: 'a "b"' }],
    ['Café <news@shop.example>', { address: 'news@shop.example', name: 'Café' }],
    ['"News"\r\n  <news@shop.example>  ', { address: 'news@shop.example', name: 'News' }],
  ];
  for (const [value, from] of cases) t.same((await prepare(`From: ${value}\r\n\r\nx`)).from, from, value);
});

t.test('From: anything but exactly one plain mailbox is refused with 550 5.6.0, so no parser can read a foreign address in it', async (t) => {
  const cases: [string, RegExp][] = [
    ['<news@shop.example>ceo@evil.example', /has text \("c"\) after the address/],
    ['<news@shop.example> <ceo@evil.example>', /has a second mailbox after the address/],
    ['CEO <ceo@evil.example> <news@shop.example>', /has a second mailbox after the address/],
    ['ceo@evil.example <news@shop.example>', /has an address outside the angle brackets/],
    ['news@shop.example ceo@evil.example', /has text \("c"\) after the address/],
    ['news@shop.example (ceo@evil.example)', /has a comment after the address/],
    ['(ceo@evil.example) news@shop.example', /has a comment/],
    ['News (x) <news@shop.example>', /has a comment/],
    ['Team: news@shop.example;', /has group syntax/],
    ['Team: <news@shop.example>;', /has group syntax/],
    ['"News <news@shop.example>', /has a quoted string without its closing quote/],
    ['<news@shop.example', /ends before a complete address/],
    ['News <news@[192.0.2.1]>', /has text \("\["\)/],
    ['news@shop.example\u0085ceo@evil.example', /contains a control character/],
    ['', /is empty/],
  ];
  for (const [value, problem] of cases) {
    await t.rejects(prepare(`From: ${value}\r\n\r\nx`), { responseCode: 550, message: new RegExp(`^5\\.6\\.0 the From header ${problem.source}`) }, value);
  }
  await t.rejects(prepare(Buffer.concat([Buffer.from('From: News '), Buffer.from([0xff]), Buffer.from(' <news@shop.example>\r\n\r\nx')])), {
    responseCode: 550,
    message: /not valid UTF-8/,
  });
});

t.test('Sender: at most one, strictly read and normalized; Resent-* fields are refused with 550 5.7.1', async (t) => {
  const m = await prepare('From: news@shop.example\r\nSender: "Ops" <Ops@Shop.example>\r\n\r\nx');
  t.equal(m.sender, 'ops@shop.example');
  t.equal((await prepare('From: news@shop.example\r\n\r\nx')).sender, undefined);
  await t.rejects(prepare('From: news@shop.example\r\nSender: a@shop.example\r\nsender: b@shop.example\r\n\r\nx'), {
    responseCode: 550,
    message: /^5\.6\.0 the message has more than one Sender header/,
  });
  await t.rejects(prepare('From: news@shop.example\r\nSender: <a@shop.example>ceo@evil.example\r\n\r\nx'), {
    responseCode: 550,
    message: /^5\.6\.0 the Sender header has text/,
  });
  await t.rejects(prepare('From: news@shop.example\r\nSender: bad..dots@shop.example\r\n\r\nx'), { responseCode: 550, message: /^5\.1\.7 Sender header: / });
  await t.rejects(prepare('FROM: a@shop.example\r\nfrom: b@shop.example\r\n\r\nx'), { responseCode: 550, message: /more than one From/ });
  for (const field of ['Resent-From: ceo@evil.example', 'resent-sender: news@shop.example', 'RESENT-TO: x@dest.example', 'Resent-Bcc: x@dest.example']) {
    await t.rejects(
      prepare(`From: news@shop.example\r\n${field}\r\n\r\nx`),
      { responseCode: 550, message: new RegExp(`^5\\.7\\.1 Resent- header fields are not accepted \\(${field.slice(0, field.indexOf(':'))}\\)`) },
      field,
    );
  }
});

t.test('an IDN From domain is normalized to its A-label', async (t) => {
  const m = await prepare('From: sales@bücher.example\r\n\r\nx');
  t.equal(m.from.address, 'sales@xn--bcher-kva.example');
});

t.test('rfc5322Date writes UTC with a numeric zone', async (t) => {
  t.equal(rfc5322Date(new Date('2024-12-31T23:59:59Z')), 'Tue, 31 Dec 2024 23:59:59 +0000');
});

t.test('refusals and errors of the send use-case map to clear SMTP replies; other errors are not answers', async (t) => {
  const text = (r: { responseCode: number; message: string } | undefined) => r && `${r.responseCode} ${r.message}`;
  const reply = (err: unknown) => text(replyForAppError(err));
  t.equal(text(replyForRefusal({ reason: 'tenant_suspended' })), '550 5.7.1 account suspended: sending is blocked');
  t.match(text(replyForRefusal({ reason: 'quota_exceeded', used: 10, cap: 10 })), /^552 5\.2\.2 monthly send quota exhausted \(cap 10\)/);
  t.match(reply(new AppError('no_verified_domain', 'no sending domain')), /^550 5\.7\.1 no sending domain/);
  t.match(reply(validationError('From header', 'not verified')), /^550 5\.7\.1 From header: not verified/);
  t.match(reply(new AppError('payload_too_large', 'too big')), /^552 5\.3\.4 too big/);
  t.match(reply(new AppError('internal', 'no active DKIM key')), /^451 4\.3\.0 /, 'our own fault is temporary');
  t.equal(replyForAppError(new Error('connection reset')), undefined);
});
