// The light header read of received messages: first Message-ID, From and Subject, unfolded and decoded, and the bad inputs (no header block, NUL bytes,
// unknown charsets).
import t from 'tap';
import { decodeWords, summarizeHeaders } from '../../../shared/inbound/headers.js';

t.test('reads the first Message-ID, From and Subject of the header block only', async (t) => {
  const text = [
    'Received: from a by b',
    'From: =?UTF-8?Q?J=C3=B6rg?= <jorg@example.org>',
    'Subject: A subject',
    '  folded onto a second line',
    'Message-ID:',
    ' <abc.123@example.org>',
    'Subject: a second subject is ignored',
    '',
    'Subject: body text, not a header',
  ].join('\r\n');
  t.same(summarizeHeaders(Buffer.from(text)), {
    messageId: 'abc.123@example.org',
    from: 'Jörg <jorg@example.org>',
    subject: 'A subject folded onto a second line',
  });
});

t.test('a field only in the body, or a message without a header block, gives nulls', async (t) => {
  t.same(summarizeHeaders(Buffer.from('\r\nSubject: in the body\r\n')), { messageId: null, from: null, subject: null });
  t.same(summarizeHeaders(Buffer.from('')), { messageId: null, from: null, subject: null });
  t.same(summarizeHeaders(Buffer.from('Subject:   \r\nMessage-ID: <>\r\n\r\n')), { messageId: null, from: null, subject: null }, 'empty values are null');
});

t.test('bare LF line endings, a mbox From_ line and control characters (NUL) are coped with', async (t) => {
  const summary = summarizeHeaders(Buffer.from('From someone Sat Jan  1 00:00:00 2000\nSubject: tab\there\u0000 and nul\nFrom: a@b.example\n\nbody'));
  t.same(summary, { messageId: null, from: 'a@b.example', subject: 'tab here and nul' });
});

t.test('RFC 2047: B and Q words, adjacent words joined, several charsets, an unknown charset left alone', async (t) => {
  t.equal(decodeWords('=?UTF-8?B?SMOpbGxv?= =?UTF-8?Q?_w=C3=B6rld?='), 'Héllo wörld');
  t.equal(decodeWords('=?ISO-8859-1?Q?caf=E9?= time'), 'café time');
  t.equal(decodeWords('=?x-unknown?Q?abc?='), '=?x-unknown?Q?abc?=');
  t.equal(decodeWords('plain =? text'), 'plain =? text');
  t.equal(decodeWords(undefined), undefined);
});

t.test('long values are bounded', async (t) => {
  const summary = summarizeHeaders(Buffer.from(`Subject: ${'s'.repeat(5000)}\r\n\r\n`));
  t.equal(summary.subject!.length, 2000);
});

t.test('deliveredTo: the delivery header a mailbox server added, in order of trust', async (t) => {
  const { deliveredTo } = await import('../../../shared/inbound/headers.js');
  t.equal(deliveredTo(Buffer.from('Delivered-To: <B+x@Example.COM>\r\nX-Original-To: other@example.com\r\n\r\nbody')), 'b+x@example.com');
  t.equal(deliveredTo(Buffer.from('X-Original-To: first@example.com\r\nEnvelope-To: second@example.com\r\n\r\n')), 'first@example.com');
  t.equal(deliveredTo(Buffer.from('Envelope-To: only@example.com\r\n\r\n')), 'only@example.com');
  t.equal(deliveredTo(Buffer.from('Subject: none\r\n\r\nDelivered-To: in-the-body@example.com\r\n')), null, 'not from the body');
  t.equal(deliveredTo(Buffer.from('Delivered-To: not an address\r\n\r\n')), null);
});
