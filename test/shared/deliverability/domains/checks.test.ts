// checkSpf, checkDkim, checkDmarc, checkMx and parseTags against a real DNS server on loopback, including failed look-ups.
import t from 'tap';
import { createResolver } from '../../../../shared/kernel/dns.js';
import { checkDkim, checkDmarc, checkMx, checkSpf, parseTags } from '../../../../shared/deliverability/domains/checks.js';
import { generateDkimKey } from '../../../../shared/deliverability/domains/dkim-keys.js';
import { startDnsServer } from '../../../helpers/dns-server.js';

const INCLUDE = 'spf.mx.mailpath.test';
const MAIL_HOST = 'mx.mailpath.test';
const OPTIONS = { timeoutMs: 150, tries: 1 };

t.test('parseTags', async (t) => {
  const tags = parseTags(' V=DKIM1 ; k = rsa;p=AB CD\r\n\tEF; ; novalue; t=y ; t=s');
  t.equal(tags.get('v'), 'DKIM1', 'names are trimmed and lower-cased');
  t.equal(tags.get('k'), 'rsa', 'whitespace around = is dropped');
  t.equal(tags.get('p'), 'ABCDEF', 'folding whitespace inside a value is dropped');
  t.equal(tags.get('t'), 'y', 'the first of a repeated tag wins');
  t.notOk(tags.has('novalue'), 'a part without = is skipped');
  t.same([...tags.keys()], ['v', 'k', 'p', 't']);
  t.same([...parseTags('').entries()], []);
  t.equal(parseTags('p=').get('p'), '', 'an empty value (a revoked DKIM key) is kept as empty');
  t.equal(parseTags('x=a=b').get('x'), 'a=b', 'only the first = separates name and value');
});

t.test('checks against a loopback DNS server', async (t) => {
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], OPTIONS);

  t.test('SPF', async (t) => {
    server.setTxt('spf-ok.example', ['v=spf1 include:spf.mx.mailpath.test ~all', 'google-site-verification=abc']);
    const ok = await checkSpf(dns, 'spf-ok.example', INCLUDE);
    t.same(ok, { verified: true, found: 'v=spf1 include:spf.mx.mailpath.test ~all', error: null, lookupFailed: false }, 'verified; other TXT records ignored');

    const none = await checkSpf(dns, 'spf-none.example', INCLUDE);
    t.same(none, { verified: false, found: null, error: 'no SPF record (v=spf1) at spf-none.example', lookupFailed: false }, 'no record at a missing name');
    server.setTxt('spf-other-txt.example', ['some other text', 'v=spf10 include:spf.mx.mailpath.test']);
    t.match(await checkSpf(dns, 'spf-other-txt.example', INCLUDE), { verified: false, found: null, error: /^no SPF record/ }, 'v=spf10 is not an SPF record');

    server.setTxt('spf-two.example', ['v=spf1 include:spf.mx.mailpath.test ~all', 'v=spf1 include:_spf.google.com ~all']);
    const two = await checkSpf(dns, 'spf-two.example', INCLUDE);
    t.equal(two.verified, false, 'two SPF records never verify, even when one would');
    t.equal(two.lookupFailed, false);
    t.match(two.error, /^2 SPF records at spf-two\.example/);
    t.match(two.error, /permerror/);
    t.match(
      two.found,
      new RegExp(
        [
          /include:spf\.mx\.mailpath\.test ~all \| v=spf1 include:_spf\.google\.com ~all/.source,
          /include:_spf\.google\.com ~all \| v=spf1 include:spf\.mx\.mailpath\.test ~all/.source,
        ].join('|'),
      ),
    );

    server.setTxt('spf-missing.example', ['v=spf1 include:_spf.google.com mx -all']);
    t.same(
      await checkSpf(dns, 'spf-missing.example', INCLUDE),
      { verified: false, found: 'v=spf1 include:_spf.google.com mx -all', error: `the SPF record does not include:${INCLUDE}`, lookupFailed: false },
      'include missing',
    );

    for (const qualifier of ['-', '~', '?']) {
      const name = `spf-q${qualifier === '-' ? 'fail' : qualifier === '~' ? 'soft' : 'neutral'}.example`;
      server.setTxt(name, [`v=spf1 ${qualifier}include:${INCLUDE} -all`]);
      const r = await checkSpf(dns, name, INCLUDE);
      t.equal(r.verified, false, `${qualifier}include does not authorize`);
      t.match(r.error, /does not include:/);
    }

    server.setTxt('spf-plus.example', [`v=spf1 +include:${INCLUDE} -all`]);
    t.equal((await checkSpf(dns, 'spf-plus.example', INCLUDE)).verified, true, '+include authorizes');

    server.setTxt('spf-case.example', ['V=SPF1 mx INCLUDE:SPF.MX.Mailpath.TEST. ~all']);
    t.equal((await checkSpf(dns, 'spf-case.example', INCLUDE)).verified, true, 'case-insensitive, trailing dot tolerated');

    server.setTxt('spf-split.example', [['v=spf1 include:spf.mx.', 'mailpath.test ~all']]);
    t.equal((await checkSpf(dns, 'spf-split.example', INCLUDE)).verified, true, 'a record split into strings is joined without a separator');

    server.setTxt('spf-elsewhere.example', ['v=spf1 include:spf.mx.mailpath.test.evil.example include:other.mailpath.test a:spf.mx.mailpath.test ~all']);
    t.equal((await checkSpf(dns, 'spf-elsewhere.example', INCLUDE)).verified, false, 'an include of a different host (or a: of ours) does not count');

    server.setTxt('spf-sub.example', ['v=spf1 include:spf.mx.mailpath.test ~all']);
    t.equal((await checkSpf(dns, 'spf-sub.example', INCLUDE)).verified, true);
    t.equal((await checkSpf(dns, 'mail.spf-sub.example', INCLUDE)).verified, false, "a subdomain is not covered by its parent's SPF record");
  });

  t.test('DKIM', async (t) => {
    const key = await generateDkimKey(2048);
    const record = `v=DKIM1; k=rsa; p=${key.publicKey}`;
    t.ok(record.length > 255, 'a 2048-bit record needs more than one character-string');

    const host = 'mp20300101._domainkey.dkim.example';
    server.setTxt(host, [[record.slice(0, 255), record.slice(255)]]);
    t.same(
      await checkDkim(dns, host, key.publicKey),
      { verified: true, found: record, error: null, lookupFailed: false },
      'published as two strings: verifies',
    );

    server.setTxt(host, [[record.slice(0, 20), record.slice(20, 200), record.slice(200)]]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, true, 'split inside the tags: still joined without separator');

    const folded =
      `v=DKIM1; k=rsa; p=${key.publicKey.slice(0, 100)} ${key.publicKey.slice(100, 200)}\t${key.publicKey.slice(200, 300)}\r\n ` +
      `${key.publicKey.slice(300)}`;
    server.setTxt(host, [folded]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, true, 'folding whitespace inside p= is tolerated');

    server.setTxt(host, [`p=${key.publicKey}`]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, true, 'v= and k= may be left out (defaults DKIM1, rsa)');

    server.setTxt(host, [`v=DKIM2; k=rsa; p=${key.publicKey}`]);
    const v2 = await checkDkim(dns, host, key.publicKey);
    t.equal(v2.verified, false, 'a v=DKIM2 record is ignored');
    t.equal(v2.found, `v=DKIM2; k=rsa; p=${key.publicKey}`);

    server.setTxt(host, [`v=DKIM1; k=ed25519; p=${key.publicKey}`]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, false, 'a k=ed25519 record is ignored');

    server.setTxt(host, [`v=DKIM1; k=ed25519; p=${key.publicKey}`, `v=DKIM1; k=RSA; p=${key.publicKey}`]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, true, 'an RSA record beside an ed25519 one verifies');

    const other = await generateDkimKey(1024);
    const wrong = `v=DKIM1; k=rsa; p=${other.publicKey}`;
    server.setTxt(host, [wrong]);
    const mismatch = await checkDkim(dns, host, key.publicKey);
    t.equal(mismatch.verified, false, 'another key does not verify');
    t.equal(mismatch.found, wrong, 'found holds what is published');
    t.equal(mismatch.error, `the DKIM record at ${host} does not hold this domain's public key`);
    t.equal(mismatch.lookupFailed, false);

    server.setTxt(host, [`v=DKIM1; k=rsa; p=${key.publicKey.slice(0, -4)}`]);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, false, 'a truncated key does not verify');

    server.setTxt(host, ['v=DKIM1; k=rsa; p=']);
    t.equal((await checkDkim(dns, host, key.publicKey)).verified, false, 'a revoked (empty) key does not verify');

    const missing = await checkDkim(dns, 'nosuch._domainkey.dkim.example', key.publicKey);
    t.same(missing, { verified: false, found: null, error: 'no DKIM record at nosuch._domainkey.dkim.example', lookupFailed: false }, 'no record');
  });

  t.test('DMARC', async (t) => {
    for (const policy of ['none', 'quarantine', 'reject', 'REJECT']) {
      const domain = `dmarc-${policy}.example`;
      const record = `v=DMARC1; p=${policy}; rua=mailto:d@${domain}`;
      server.setTxt(`_dmarc.${domain}`, [record]);
      t.same(await checkDmarc(dns, domain), { verified: true, found: record, error: null, lookupFailed: false }, `p=${policy} verifies`);
    }
    server.setTxt('_dmarc.dmarc-spaced.example', ['v = DMARC1 ; p = quarantine']);
    t.equal((await checkDmarc(dns, 'dmarc-spaced.example')).verified, true, 'whitespace around tags is allowed');

    for (const bad of ['v=DMARC1; p=monitor', 'v=DMARC1; rua=mailto:x@example.com', 'v=DMARC1; p=']) {
      server.setTxt('_dmarc.dmarc-bad.example', [bad]);
      const r = await checkDmarc(dns, 'dmarc-bad.example');
      t.equal(r.verified, false, `${bad}: fails`);
      t.equal(r.found, bad);
      t.match(r.error, /^the DMARC record at _dmarc\.dmarc-bad\.example has no valid p=/);
    }

    server.setTxt('_dmarc.dmarc-two.example', ['v=DMARC1; p=none', 'v=DMARC1; p=reject']);
    const two = await checkDmarc(dns, 'dmarc-two.example');
    t.equal(two.verified, false, 'two records fail');
    t.match(two.error, /^2 DMARC records at _dmarc\.dmarc-two\.example/);

    server.setTxt('_dmarc.dmarc-other.example', ['v=spf1 -all', 'v=DMARC10; p=none']);
    t.match(await checkDmarc(dns, 'dmarc-other.example'), { verified: false, error: /^no DMARC record/ }, 'non-DMARC TXT records are not DMARC records');

    // Parent-domain fallback.
    server.setTxt('_dmarc.parent.example', ['v=DMARC1; p=reject; sp=none']);
    const viaSp = await checkDmarc(dns, 'mail.parent.example');
    t.same(
      viaSp,
      { verified: true, found: 'v=DMARC1; p=reject; sp=none', error: null, lookupFailed: false },
      "a subdomain without a record is covered by the parent's record",
    );
    t.equal((await checkDmarc(dns, 'a.b.parent.example')).verified, true, 'walks up more than one label');

    server.setTxt('_dmarc.parent-badsp.example', ['v=DMARC1; p=reject; sp=bogus']);
    const badSp = await checkDmarc(dns, 'mail.parent-badsp.example');
    t.equal(badSp.verified, false, 'the parent sp= is the policy that applies to a subdomain');
    t.match(badSp.error, /at _dmarc\.parent-badsp\.example has no valid p=/);
    t.equal((await checkDmarc(dns, 'parent-badsp.example')).verified, true, 'while the parent itself uses its p=');

    server.setTxt('_dmarc.parent-p.example', ['v=DMARC1; p=quarantine']);
    t.equal((await checkDmarc(dns, 'mail.parent-p.example')).verified, true, 'without sp= the parent p= applies');

    server.setTxt('_dmarc.parent-nop.example', ['v=DMARC1; sp=reject']);
    t.equal((await checkDmarc(dns, 'parent-nop.example')).verified, false, 'sp= alone does not make the organizational record valid');
    t.equal((await checkDmarc(dns, 'mail.parent-nop.example')).verified, true, 'but it does set the subdomain policy');

    server.setTxt('_dmarc.own.parent.example', ['v=DMARC1; p=bogus']);
    t.equal((await checkDmarc(dns, 'own.parent.example')).verified, false, "a subdomain's own invalid record is not overridden by the parent's");
    server.remove('_dmarc.own.parent.example');

    const none = await checkDmarc(dns, 'mail.nowhere.example');
    t.same(
      none,
      { verified: false, found: null, error: 'no DMARC record (v=DMARC1) at _dmarc.mail.nowhere.example', lookupFailed: false },
      'no record anywhere',
    );
  });

  t.test('MX', async (t) => {
    server.setMx('mx-ok.example', [{ exchange: MAIL_HOST, priority: 10 }]);
    t.same(await checkMx(dns, 'mx-ok.example', MAIL_HOST), { verified: true, found: `10 ${MAIL_HOST}`, error: null, lookupFailed: false });

    server.setMx('mx-case.example', [
      { exchange: 'backup.example.net.', priority: 20 },
      { exchange: 'MX.MailPath.TEST.', priority: 10 },
    ]);
    const mixed = await checkMx(dns, 'mx-case.example', MAIL_HOST);
    t.equal(mixed.verified, true, 'case and trailing dot do not matter; other MX hosts may coexist');
    t.equal(mixed.found, `10 ${MAIL_HOST}, 20 backup.example.net`, 'found lists every MX by priority');

    server.setMx('mx-prio.example', [{ exchange: MAIL_HOST, priority: 20 }]);
    const prio = await checkMx(dns, 'mx-prio.example', MAIL_HOST);
    t.same(
      prio,
      { verified: false, found: `20 ${MAIL_HOST}`, error: `the MX record for ${MAIL_HOST} has priority 20, expected 10`, lookupFailed: false },
      'another priority fails, naming it',
    );

    server.setMx('mx-other.example', [{ exchange: 'mx.elsewhere.example', priority: 10 }]);
    t.same(await checkMx(dns, 'mx-other.example', MAIL_HOST), {
      verified: false,
      found: '10 mx.elsewhere.example',
      error: `no MX record points at ${MAIL_HOST}`,
      lookupFailed: false,
    });

    t.same(
      await checkMx(dns, 'mx-none.example', MAIL_HOST),
      { verified: false, found: null, error: 'no MX record at mx-none.example', lookupFailed: false },
      'no record',
    );
    server.setTxt('mx-txt-only.example', ['hello']);
    t.equal((await checkMx(dns, 'mx-txt-only.example', MAIL_HOST)).error, 'no MX record at mx-txt-only.example', 'a name without MX (NODATA) has none');
  });
});

t.test('failed look-ups are unverified and say so, never "absent"', async (t) => {
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], OPTIONS);
  const key = await generateDkimKey(1024);
  server.setTxt('fail.example', [`v=spf1 include:${INCLUDE} ~all`]);
  server.setTxt('_dmarc.fail.example', ['v=DMARC1; p=none']);
  server.setTxt('sel._domainkey.fail.example', [`v=DKIM1; k=rsa; p=${key.publicKey}`]);
  server.setMx('fail.example', [{ exchange: MAIL_HOST, priority: 10 }]);
  const all = () =>
    Promise.all([
      checkSpf(dns, 'fail.example', INCLUDE),
      checkDkim(dns, 'sel._domainkey.fail.example', key.publicKey),
      checkDmarc(dns, 'fail.example'),
      checkMx(dns, 'fail.example', MAIL_HOST),
    ]);

  const healthy = await all();
  t.same(
    healthy.map((r) => r.verified),
    [true, true, true, true],
    'everything verifies while the server answers',
  );

  for (const [mode, code] of [
    ['timeout', 'ETIMEOUT'],
    ['servfail', 'ESERVFAIL'],
  ] as const) {
    server.setMode(mode);
    const results = await all();
    for (const [i, r] of results.entries()) {
      const kind = ['spf', 'dkim', 'dmarc', 'mx'][i];
      t.equal(r.verified, false, `${mode} ${kind}: not verified`);
      t.equal(r.lookupFailed, true, `${mode} ${kind}: lookupFailed`);
      t.equal(r.found, null, `${mode} ${kind}: nothing found`);
      t.match(r.error, /^DNS look-up failed: DNS (TXT|MX) look-up for \S+ via 127\.0\.0\.1:\d+ failed: /, `${mode} ${kind}: the error names the DNS failure`);
      t.match(r.error, new RegExp(code), `${mode} ${kind}: ${code}`);
    }
  }
  server.setMode('answer');
  t.same(
    (await all()).map((r) => r.verified),
    [true, true, true, true],
    'verifies again once the server answers',
  );
});
