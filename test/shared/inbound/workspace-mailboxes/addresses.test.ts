// Mailbox address rules: the accepted form, lower-casing and IDNA, and every refused shape naming its field.
import t from 'tap';
import { parseDisplayName, parseMailboxAddress } from '../../../../shared/inbound/workspace-mailboxes/addresses.js';

t.test('accepted addresses come back lower-cased, the domain in ASCII form', async (t) => {
  t.same(parseMailboxAddress('  Sales.Team@Example.COM\t'), { address: 'sales.team@example.com', local: 'sales.team', domain: 'example.com' });
  t.equal(parseMailboxAddress('a_b-c.d9@bücher.example').address, 'a_b-c.d9@xn--bcher-kva.example');
  t.equal(parseMailboxAddress('x@example.com').address, 'x@example.com', 'one character');
  t.equal(parseMailboxAddress(`${'a'.repeat(64)}@example.com`).local.length, 64);
});

t.test('refused shapes are 422 naming the field', async (t) => {
  const bad = [
    '',
    'plain',
    '@example.com',
    'user@',
    'a@b@example.com',
    'a%b@example.com',
    'a!b@example.com',
    '"q"@example.com',
    'a+b@example.com',
    '.a@example.com',
    'a.@example.com',
    'a..b@example.com',
    '_a@example.com',
    'a b@example.com',
    'üser@example.com',
    `${'a'.repeat(65)}@example.com`,
    'user@example.com.',
    'user@localhost',
    'user@192.0.2.1',
    'user@[192.0.2.1]',
    'user@example.com\r\nBcc: x@example.org',
    'user\u200b@example.com',
    `user@${'a'.repeat(250)}.com`,
  ];
  for (const input of bad) {
    t.throws(() => parseMailboxAddress(input, 'address'), { name: 'AppError', message: /^address/ }, JSON.stringify(input));
  }
  t.throws(() => parseMailboxAddress('bad', 'to'), { name: 'AppError', message: /^to/ }, 'names the given field');
});

t.test('display names: trimmed, one line, at most 100 characters; empty means none', async (t) => {
  t.equal(parseDisplayName(undefined), null);
  t.equal(parseDisplayName('   '), null);
  t.equal(parseDisplayName('  Sales Team '), 'Sales Team');
  t.equal(parseDisplayName('Ünïcode ok'), 'Ünïcode ok');
  for (const input of ['a\r\nBcc: x', 'a\nb', 'tab\there', 'zero\u200bwidth', 'x'.repeat(101)]) {
    t.throws(() => parseDisplayName(input), { name: 'AppError', message: /^display_name/ }, JSON.stringify(input));
  }
});
