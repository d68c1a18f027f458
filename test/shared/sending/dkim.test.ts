// Composition and DKIM signing, checked by an independent verifier (Debian python3-dkim) against a loopback DNS server.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import t from 'tap';
import { composeMessage } from '../../../shared/sending/compose.js';
import { parseSigningKey, signMessage } from '../../../shared/sending/dkim.js';
import { generateDkimKey } from '../../../shared/deliverability/domains/dkim-keys.js';
import { dkimTxtValue } from '../../../shared/deliverability/domains/records.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { splitTxt } from '../../helpers/domains.js';
import { join } from 'node:path';
import { projectRoot } from '../../../shared/kernel/paths.js';

const PYTHON = '/usr/bin/python3';
const VERIFIER = join(projectRoot(), 'test', 'helpers', 'dkim-verify.py');

/** Runs the verifier asynchronously: the loopback DNS server it queries lives in this process's event loop. */
function dkimverify(message: Buffer, dnsAddress: string): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [VERIFIER, dnsAddress], { timeout: 20_000 });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ok: code === 0, output: output.trim() }));
    child.stdin.end(message);
  });
}

const available = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import dkim, dns.resolver']).status === 0;

t.test('a composed, signed message verifies with python3-dkim; a tampered one does not', async (t) => {
  // The independent verifier is part of the test set-up: without it this test fails, it is never skipped.
  t.ok(available, 'the verifier is installed (apt-get install python3-dkim python3-dnspython; .ci/run does it)');
  if (!available) return;
  const dns = await startDnsServer(t);
  const key = await generateDkimKey(2048);
  dns.setTxt('mp20261121._domainkey.send.example', [splitTxt(dkimTxtValue(key.publicKey))]);
  const at = new Date('2026-11-21T12:00:00Z');
  const message = await composeMessage({
    from: { address: 'hello@send.example', name: 'Send Example' },
    to: 'rcpt@example.org',
    replyTo: 'support@send.example',
    subject: 'Grüße — your receipt',
    text: 'Thanks for your order.\n',
    html: '<p>Thanks for your <b>order</b>.</p>',
    headers: { 'X-Campaign': 'receipts' },
    attachments: [{ filename: 'receipt.txt', content: Buffer.from('total: 42\n'), contentType: 'text/plain' }],
    messageId: '0f8e2a2c-0000-4000-8000-000000000001@mx.mailpath.test',
    date: at,
  });
  const text = message.toString('utf8');
  t.match(text, /^Message-ID: <0f8e2a2c-0000-4000-8000-000000000001@mx\.mailpath\.test>\r$/m);
  t.match(text, /^Date: Sat, 21 Nov 2026 12:00:00 \+0000\r$/m);
  t.match(text, /^Content-Type: multipart\/mixed/m);
  t.match(text, /multipart\/alternative/);
  t.notMatch(text, /^Bcc:/m);

  const signed = await signMessage(message, { domain: 'send.example', selector: 'mp20261121', privateKey: key.privateKeyPem }, at);
  const header = signed.toString('utf8').split('\r\n\r\n')[0]!;
  t.match(header, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=send\.example;/);
  t.match(header.replace(/\r\n\s+/g, ' '), /h=[^;]*From[^;]*/i, 'From is signed');
  for (const h of ['to', 'subject', 'date', 'message-id', 'mime-version', 'content-type']) {
    t.match(header.replace(/\r\n\s+/g, '').toLowerCase(), new RegExp(`h=[^;]*\\b${h}\\b`), `${h} is signed`);
  }
  t.match(header.replace(/\r\n\s+/g, ' '), /s=mp20261121/);

  const verified = await dkimverify(signed, dns.address);
  t.ok(verified.ok, `python3-dkim verifies it: ${verified.output}`);

  const tampered = Buffer.from(signed.toString('utf8').replace('Thanks for your order.', 'Thanks for your ORDER.'));
  t.notOk((await dkimverify(tampered, dns.address)).ok, 'a changed body fails');
  const otherSubject = Buffer.from(signed.toString('utf8').replace(/^Subject: .*$/m, 'Subject: changed'));
  t.notOk((await dkimverify(otherSubject, dns.address)).ok, 'a changed subject fails');
  dns.remove('mp20261121._domainkey.send.example');
  t.notOk((await dkimverify(signed, dns.address)).ok, 'without the key in DNS it fails');
});

t.test('a submitted message with bare LF line ends and folded headers is signed as sent on the wire (CRLF) and verifies', async (t) => {
  t.ok(available, 'the verifier is installed');
  if (!available) return;
  const dns = await startDnsServer(t);
  const key = await generateDkimKey(1024);
  dns.setTxt('s2._domainkey.lf.example', [splitTxt(dkimTxtValue(key.publicKey))]);
  const raw = Buffer.from(
    'From: Ann <ann@lf.example>\nTo: bob@example.org\nSubject: a subject\n  folded over two lines\nDate: Sat, 21 Nov 2026 12:00:00 +0000\n' +
      'Message-ID: <lf-1@lf.example>\nMIME-Version: 1.0\nContent-Type: text/plain; charset=utf-8\n\nline one  \nline two\n\n\n',
  );
  const signed = await signMessage(raw, { domain: 'lf.example', selector: 's2', privateKey: parseSigningKey(key.privateKeyPem) }, new Date());
  t.notMatch(signed.toString('latin1'), /[^\r]\n/, 'every line ends in CRLF');
  const verified = await dkimverify(signed, dns.address);
  t.ok(verified.ok, `python3-dkim verifies it: ${verified.output}`);
  await t.rejects(signMessage(Buffer.from('no separator'), { domain: 'lf.example', selector: 's2', privateKey: key.privateKeyPem }, new Date()), {
    name: 'DkimSignError',
  });
});
