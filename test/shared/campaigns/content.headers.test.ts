// Every campaign message carries List-Unsubscribe (https and mailto), List-Unsubscribe-Post and Feedback-ID, covered by its DKIM signature, as an
// independent verifier (Debian python3-dkim) sees it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import t from 'tap';
import { tenantFeedbackTag } from '../../../shared/campaigns/feedback-id.js';
import { dkimTxtValue } from '../../../shared/deliverability/domains/records.js';
import { uuidAt, verifyToken } from '../../../shared/engagement/tracking/tokens.js';
import { addresses, campaignApp, createCampaign, drain, listOf, sender, sendNow } from '../../helpers/campaigns.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { splitTxt } from '../../helpers/domains.js';
import { join } from 'node:path';
import { projectRoot } from '../../../shared/kernel/paths.js';

const PYTHON = '/usr/bin/python3';
const VERIFIER = join(projectRoot(), 'test', 'helpers', 'dkim-verify.py');
const available = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import dkim, dns.resolver']).status === 0;

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

const s = await campaignApp(t, { env: { MAILPATH_PUBLIC_URL: 'https://mail.example.test', MAILPATH_HOSTNAME: 'mx.example.test' } });

t.test('the bulk-sender headers are on every campaign message and DKIM-signed', async (t) => {
  t.ok(available, 'the verifier is installed (apt-get install python3-dkim python3-dnspython; .ci/run does it)');
  if (!available) return;
  const dns = await startDnsServer(t);
  const a = await sender(s);
  dns.setTxt(`${a.domain.selector}._domainkey.${a.domain.name}`, [splitTxt(dkimTxtValue(a.domain.key.publicKey))]);
  const { listId } = await listOf(s.sql, a.tenant.tenantId, addresses('h', 3));
  const c = await createCampaign(s, a.tenant.token, { list_id: listId, from_email: a.from, body_html: '<p>Hello {{ contact.email }}</p>' });
  await sendNow(s, a.tenant.token, c.id);
  t.equal(await drain(s, c.id), 'completed');

  const sends = await s.sql<{ id: string; message: Buffer }[]>`select id, message from sends where campaign_id = ${c.id}`;
  t.equal(sends.length, 3);
  for (const send of sends) {
    const header = send.message
      .toString('latin1')
      .split('\r\n\r\n')[0]!
      .replace(/\r\n[ \t]+/g, ' ');
    const unsubscribe = /^List-Unsubscribe: <https:\/\/mail\.example\.test\/u\/([\w.-]+)>, <mailto:u-([\w.-]+)@mx\.example\.test>$/m.exec(header);
    t.ok(unsubscribe, 'List-Unsubscribe with the https URL and the mailto');
    t.equal(uuidAt(verifyToken(s.ctx.linkKey, 'unsubscribe', unsubscribe![1]!)!), send.id, 'its token names this send');
    t.match(header, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    t.match(header, new RegExp(`^Feedback-ID: ${c.id}:${tenantFeedbackTag(s.ctx.linkKey, a.tenant.tenantId)}:campaign:mailpath$`, 'm'));
    const signed = /^DKIM-Signature: .*\bh=([^;]+);/m.exec(header)![1]!.replace(/\s+/g, '').toLowerCase().split(':');
    for (const h of ['list-unsubscribe', 'list-unsubscribe-post', 'feedback-id', 'from', 'subject']) t.ok(signed.includes(h), `${h} is signed`);
    const verified = await dkimverify(send.message, dns.address);
    t.ok(verified.ok, `python3-dkim verifies it: ${verified.output}`);
  }
  // Headers as folded on the wire: the values start on the next line.
  const raw = sends[0]!.message.toString('latin1');
  t.ok(raw.includes('<https://mail.example.test/u/') && raw.includes(`${c.id}:${tenantFeedbackTag(s.ctx.linkKey, a.tenant.tenantId)}:campaign:mailpath`));
  const tampered = Buffer.from(raw.replace('<https://mail.example.test/u/', '<https://evil.example/u/'), 'latin1');
  t.notOk((await dkimverify(tampered, dns.address)).ok, 'a changed List-Unsubscribe fails the signature');
  const feedback = Buffer.from(raw.replace(`${c.id}:${tenantFeedbackTag(s.ctx.linkKey, a.tenant.tenantId)}:campaign`, `${c.id}:other:campaign`), 'latin1');
  t.notOk((await dkimverify(feedback, dns.address)).ok, 'so does a changed Feedback-ID');
});
