// Plugin sender-auth: SPF, DKIM and DMARC through the loopback DNS into an Authentication-Results header of the stored message; DNS failures and slow checks
// never refuse or lose mail.
import t from 'tap';
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign } from 'mailauth';
import { authenticationResults } from '../../plugins/sender-auth.js';
import { RawSmtpClient } from '../helpers/smtp-client.js';
import { MX_HOST, message, startTestMx, tenantDomain, type TestMx } from '../mta/inbound/fixtures.js';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const privatePem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const publicB64 = publicKey.export({ type: 'spki', format: 'der' }).toString('base64');

/** Publishes signer.example: its DKIM key, SPF allowing 127.0.0.1 (or not) and a DMARC policy. */
function publishSigner(mx: TestMx, spf = 'v=spf1 ip4:127.0.0.1 -all'): void {
  mx.dns.setTxt('s1._domainkey.signer.example', [`v=DKIM1; k=rsa; p=${publicB64}`]);
  mx.dns.setTxt('signer.example', [spf]);
  mx.dns.setTxt('_dmarc.signer.example', ['v=DMARC1; p=reject']);
}

async function signed(headers: Record<string, string>, body: string): Promise<string> {
  const raw = message(headers, body);
  const key = { signingDomain: 'signer.example', selector: 's1', privateKey: privatePem };
  const result = await dkimSign(raw, { ...key, canonicalization: 'relaxed/relaxed', signatureData: [key] });
  if (result.errors.length > 0 || !result.signatures.startsWith('DKIM-Signature:')) throw new Error(`signing failed: ${JSON.stringify(result.errors)}`);
  return `${result.signatures}${raw}`;
}

/** Sends `data` and returns the 250 (or refusal) text and the stored Authentication-Results header. */
async function deliver(mx: TestMx, to: string, data: string, from = 'bounce@signer.example') {
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO mail.signer.example');
  await client.command(`MAIL FROM:<${from}>`);
  await client.command(`RCPT TO:<${to}>`);
  await client.command('DATA');
  const reply = await client.command(`${data}.`);
  await client.quit();
  const id = /queued as (\S+)/.exec(reply.text)?.[1];
  const [row] = id
    ? await mx.sql<{ raw: Buffer; authentication_results: string }[]>`select raw, authentication_results from inbound_messages where id = ${id}`
    : [];
  const header = row ? authenticationResults(row.raw.toString()) : undefined;
  return { reply, header, column: row?.authentication_results };
}

t.test('a DKIM-signed message from a domain with SPF and DMARC: spf, dkim and dmarc pass in Authentication-Results', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql);
  publishSigner(mx);
  const data = await signed(
    { From: 'Ann <ann@signer.example>', To: `x@${d.name}`, Subject: 'Signed', 'Message-ID': '<s1@signer.example>', Date: 'Sun, 22 Nov 2026 00:00:00 +0000' },
    'A signed body.\r\n',
  );
  const { reply, header, column } = await deliver(mx, `x@${d.name}`, data);
  t.equal(reply.code, 250);
  t.match(header, new RegExp(`^Authentication-Results: ${MX_HOST.replace(/\./g, '\\.')};\\r\\n`), 'authserv-id is our host name');
  t.match(header, /dkim=pass [^;]*header\.i=@signer\.example header\.s=s1/);
  t.match(header, /spf=pass [^;]*smtp\.mailfrom=bounce@signer\.example/);
  t.match(header, /dmarc=pass [^;]*header\.from=signer\.example/);
  t.match(column, /^mx\.mailpath\.test; .*dkim=pass.*spf=pass.*dmarc=pass/, 'the column holds the same results, unfolded');
  t.notMatch(column, /\r|\n/);
});

t.test('failures are recorded, never enforced: a tampered body and a sender outside SPF are still stored', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql);
  publishSigner(mx, 'v=spf1 ip4:192.0.2.1 -all');
  const data = (await signed({ From: 'ann@signer.example', Subject: 'Tampered' }, 'Original body.\r\n')).replace('Original', 'Changed');
  const { reply, header } = await deliver(mx, `x@${d.name}`, data);
  t.equal(reply.code, 250, 'accepted: inbound mail is untrusted but not refused for its authentication');
  t.match(header, /dkim=(fail|neutral)/);
  t.match(header, /spf=fail/);
  t.match(header, /dmarc=fail/);
});

t.test('a DNS server failing (SERVFAIL) or silent: temperror results, the message is stored', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql);
  const data = message({ From: 'ann@signer.example', Subject: 'DNS down' });
  mx.dns.setMode('servfail');
  const servfail = await deliver(mx, `x@${d.name}`, data);
  t.equal(servfail.reply.code, 250);
  t.match(servfail.header, /spf=temperror/);
  mx.dns.setMode('timeout');
  const silent = await deliver(mx, `x@${d.name}`, data);
  t.equal(silent.reply.code, 250);
  t.match(silent.header, /spf=temperror/);
});

t.test('checks slower than sender_auth.timeout_ms end as temperror, inside the hook timeout: stored, never 451', async (t) => {
  const mx = await startTestMx(t, {
    env: {
      MAILPATH_CONFIG__INBOUND__SENDER_AUTH__TIMEOUT_MS: '150',
      MAILPATH_CONFIG__DNS__TIMEOUT_MS: '3000',
      MAILPATH_CONFIG__PLUGINS__HOOK_TIMEOUT_MS: '2000',
    },
  });
  const d = await tenantDomain(mx.sql);
  mx.dns.setMode('timeout');
  const { reply, header } = await deliver(mx, `x@${d.name}`, message({ From: 'ann@signer.example', Subject: 'slow DNS' }));
  t.equal(reply.code, 250);
  t.equal(
    header,
    `Authentication-Results: ${MX_HOST};\r\n spf=temperror (checks timed out);\r\n dkim=temperror (checks timed out);\r\n dmarc=temperror (checks ` +
      `timed out)\r\n`,
  );
});

t.test('authenticationResults picks the folded Authentication-Results field out of what mailauth proposes', async (t) => {
  const proposed = 'Received-SPF: pass (x) client-ip=127.0.0.1;\r\nAuthentication-Results: mx.example;\r\n dkim=none;\r\n spf=pass\r\n';
  t.equal(authenticationResults(proposed), 'Authentication-Results: mx.example;\r\n dkim=none;\r\n spf=pass\r\n');
  t.equal(authenticationResults('Received-SPF: pass\r\n'), undefined);
});
