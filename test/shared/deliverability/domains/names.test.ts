// parseDomainName: IDN to punycode and back, normalization, and every kind of name a tenant may not send from.
import t from 'tap';
import { AppError } from '../../../../shared/kernel/errors.js';
import { parseDomainName } from '../../../../shared/deliverability/domains/names.js';

/** The AppError parseDomainName throws for input, or fails the test when it does not throw one. */
function rejection(input: string, reserved: readonly string[] = [], field?: string): AppError {
  try {
    const parsed = field === undefined ? parseDomainName(input, reserved) : parseDomainName(input, reserved, field);
    throw new Error(`accepted ${JSON.stringify(input)} as ${JSON.stringify(parsed)}`);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return err;
  }
}

t.test('plain ASCII names come back lower case, without a trailing dot', async (t) => {
  t.same(parseDomainName('example.com'), { ascii: 'example.com', unicode: 'example.com' });
  t.same(parseDomainName('Mail.EXAMPLE.Com'), { ascii: 'mail.example.com', unicode: 'mail.example.com' });
  t.same(parseDomainName('example.com.'), { ascii: 'example.com', unicode: 'example.com' }, 'trailing dot (fully qualified) dropped');
  t.same(parseDomainName('  Example.COM.  '), { ascii: 'example.com', unicode: 'example.com' }, 'surrounding whitespace trimmed');
  t.same(parseDomainName('a-b.c0.example.org'), { ascii: 'a-b.c0.example.org', unicode: 'a-b.c0.example.org' }, 'inner hyphens and digits');
});

t.test('internationalized names: U-labels become A-labels, and the unicode form is kept for display', async (t) => {
  t.same(parseDomainName('bücher.de'), { ascii: 'xn--bcher-kva.de', unicode: 'bücher.de' });
  t.same(parseDomainName('BÜCHER.DE.'), { ascii: 'xn--bcher-kva.de', unicode: 'bücher.de' }, 'upper case U-labels are mapped');
  t.same(parseDomainName('XN--BCHER-KVA.DE'), { ascii: 'xn--bcher-kva.de', unicode: 'bücher.de' }, 'an A-label given directly decodes');
  t.same(parseDomainName('mail.münchen.example'), { ascii: 'mail.xn--mnchen-3ya.example', unicode: 'mail.münchen.example' });
  t.same(parseDomainName('例え.jp'), { ascii: 'xn--r8jz45g.jp', unicode: '例え.jp' });
});

t.test('case, full-width and other compatibility variants are the same name (UTS-46 mapping): one name, one claim', async (t) => {
  const plain = { ascii: 'example.com', unicode: 'example.com' };
  for (const variant of [
    'EXAMPLE.com',
    'ｅｘａｍｐｌｅ．com', // full-width letters and full stop
    'ＥＸＡＭＰＬＥ．ＣＯＭ', // full-width capitals
    'ｅｘａｍｐｌｅ．ｃｏｍ．', // full-width trailing dot
    'example。com', // ideographic full stop
    'example｡com', // half-width ideographic full stop
    'ex\u00ADample.com', // soft hyphen (ignored)
    'ex\u200Bample.com', // zero-width space (ignored)
    'ℯxample.com', // script small e
    'Ⓔxample.com', // circled letter
  ]) {
    t.same(parseDomainName(variant), plain, JSON.stringify(variant));
  }
  t.same(parseDomainName('ｂüｃｈｅｒ．ＤＥ'), { ascii: 'xn--bcher-kva.de', unicode: 'bücher.de' }, 'full-width around a U-label');
  t.same(parseDomainName('b\u0075\u0308cher.de'), { ascii: 'xn--bcher-kva.de', unicode: 'bücher.de' }, 'a decomposed ü is the composed one (NFC)');
  for (const reserved of ['ｍｘ．ｍａｉｌｐａｔｈ．ｔｅｓｔ', 'x.ＭＸ.mailpath.test']) {
    t.match(rejection(reserved, ['mx.mailpath.test']).message, /belongs to the service/, `${reserved}: a variant of a reserved host is reserved`);
  }
  t.match(rejection('１９２．０．２．１').message, /^name: must be a domain name, not an IP address/, 'full-width digits of an IP address');
  t.match(rejection('example．com..').message, /^name: has an invalid label ""/, 'one trailing dot only, whatever its width');
  for (const name of ['a＠b.com', 'ａ／ｂ.com', 'a＊.example.com', 'example．com：25']) {
    t.equal(rejection(name).slug, 'validation_error', `${name}: a full-width separator maps to its ASCII self and is refused`);
  }
});

t.test('length limits: 63 per label, 253 for the name', async (t) => {
  const label63 = 'a'.repeat(63);
  t.equal(parseDomainName(`${label63}.com`).ascii, `${label63}.com`, 'a 63-character label is allowed');
  t.match(rejection(`${'a'.repeat(64)}.com`).message, /^name: has an invalid label/, 'a 64-character label is not');

  const name253 = [label63, label63, label63, 'b'.repeat(61)].join('.');
  t.equal(name253.length, 253);
  t.equal(parseDomainName(name253).ascii, name253, 'a 253-character name is allowed');
  const name254 = [label63, label63, label63, 'b'.repeat(62)].join('.');
  t.equal(name254.length, 254);
  t.match(rejection(name254).message, /^name: is longer than 253 characters/);
  t.equal(parseDomainName(`${name253}.`).ascii, name253, 'the trailing dot does not count towards the 253');
});

t.test('IP addresses are refused, bare or bracketed', async (t) => {
  for (const ip of ['192.0.2.1', '127.0.0.1', '::1', '2001:db8::1', '[::1]', '[2001:db8::25]', '::ffff:192.0.2.1']) {
    const err = rejection(ip);
    t.equal(err.slug, 'validation_error', ip);
    t.match(err.message, /^name: must be a domain name, not an IP address/, ip);
  }
});

t.test('single labels are refused', async (t) => {
  for (const name of ['localhost', 'com', 'example.', 'münchen']) {
    t.match(rejection(name).message, /^name: must have at least two labels/, name);
  }
});

t.test('anything but a bare name is refused: spaces, scheme, port, path, address, wildcard', async (t) => {
  for (const name of [
    'exa mple.com',
    'example .com',
    'example.com\tmail',
    'https://example.com',
    'example.com:25',
    'example.com/path',
    'example.com\\path',
    'user@example.com',
    '*.example.com',
    'example.com?x',
    'example.com#x',
  ]) {
    const err = rejection(name);
    t.equal(err.slug, 'validation_error', JSON.stringify(name));
    t.match(err.message, /^name: must be a bare domain name/, JSON.stringify(name));
  }
});

t.test('percent-encoded names are refused, not silently decoded into another name', async (t) => {
  // A DNS name has no '%'. domainToASCII follows the WHATWG URL host parser, which percent-decodes first:
  // without a check, "example%2ecom" would be accepted (and stored) as example.com.
  for (const name of ['example%2ecom', 'exa%41mple.com', 'b%C3%BCcher.de', 'example.com%20']) {
    let caught: unknown;
    let accepted: unknown;
    try {
      accepted = parseDomainName(name);
    } catch (err) {
      caught = err;
    }
    t.ok(caught instanceof AppError, `${name} is refused (was accepted as ${JSON.stringify(accepted)})`);
    t.equal((caught as AppError | undefined)?.slug, 'validation_error', name);
    t.match((caught as Error | undefined)?.message, /^name: /, name);
  }
});

t.test('labels with underscores, edge hyphens or nothing in them are refused', async (t) => {
  for (const name of ['a_b.example.com', '_dmarc.example.com', '-mail.example.com', 'mail-.example.com', 'example.com-', 'example..com', '.example.com']) {
    const err = rejection(name);
    t.equal(err.slug, 'validation_error', name);
    t.match(err.message, /^name: has an invalid label "/, name);
  }
});

t.test('a numeric top-level label is refused', async (t) => {
  for (const name of ['example.123', 'mail.example.0', '1.2.3.4.5']) {
    const err = rejection(name);
    t.equal(err.slug, 'validation_error', name);
    t.match(err.message, /^name: /, name);
  }
  t.equal(parseDomainName('example.c0m').ascii, 'example.c0m', 'a TLD with a digit among letters is fine');
});

t.test('invalid punycode is refused', async (t) => {
  const err = rejection('xn--zz.com');
  t.equal(err.slug, 'validation_error');
  t.match(err.message, /^name: is not a valid internationalized domain name/);
});

t.test('reserved hosts of the service and their subdomains are refused', async (t) => {
  const reserved = ['mailpath.test', 'mx.mailpath.example'];
  for (const name of ['mailpath.test', 'MAILPATH.TEST.', 'eu.mailpath.test', 'a.b.mailpath.test', 'mx.mailpath.example', 'x.mx.mailpath.example']) {
    const err = rejection(name, reserved);
    t.equal(err.slug, 'validation_error', name);
    t.match(err.message, /^name: .* belongs to the service and cannot be claimed/, name);
  }
  t.equal(parseDomainName('notmailpath.test', reserved).ascii, 'notmailpath.test', 'a name merely ending in the same letters is not a subdomain');
  t.equal(parseDomainName('mailpath.example', reserved).ascii, 'mailpath.example', 'the parent of a reserved host is not reserved');
  t.equal(parseDomainName('mailpath.test').ascii, 'mailpath.test', 'nothing is reserved by default');
});

t.test('the error is a 422 AppError whose message starts with the field name', async (t) => {
  const byDefault = rejection('localhost');
  t.ok(byDefault instanceof AppError);
  t.equal(byDefault.slug, 'validation_error');
  t.equal(byDefault.status, 422);
  t.match(byDefault.message, /^name: /, "default field is 'name'");
  t.match(rejection('localhost', [], 'domain').message, /^domain: must have at least two labels/);
  t.match(rejection('192.0.2.1', [], 'from_domain').message, /^from_domain: /);
  t.match(rejection('', [], 'domain').message, /^domain: must be a domain name/, 'empty');
  t.match(rejection('   ').message, /^name: must be a domain name/, 'blank');
  t.match(rejection('.').message, /^name: must be a domain name/, 'just the root');
  t.match(rejection('mailpath.test', ['mailpath.test'], 'domain').message, /^domain: mailpath\.test belongs to the service/);
});
