// The operator's log of a real `mailpath start`: one line per SMTP transaction (MX and submission, accepted and refused), per failed AUTH, per connection
// without a transaction, per delivery attempt and per API request, and no secret anywhere in it.
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
import t from 'tap';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { SealedBox } from '../../../shared/kernel/secrets/sealed-box.js';
import { createTestDatabase } from '../../helpers/db.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { https, startMailpathProcess, type HttpsAnswer } from '../../helpers/mailpath-process.js';
import { freePort } from '../../helpers/net.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { pollUntil, startSmtpSink } from '../../helpers/smtp-sink.js';

const HOST = 'mx.logs.test';
const PASSWORD = 'Correct-horse-42';
const QUERY_SECRET = 'SECRET123';
const MANY = '1000000';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});
const dns = await startDnsServer(t);
// The relay every send is delivered to: accepts ok@, refuses bounce@ for good.
const sink = await startSmtpSink(t);
sink.answerFor('bounce@dest.test', { code: 550, text: '5.1.1 User unknown' });

const masterKey = randomBytes(32);
const [submissionPort, submissionTlsPort] = [await freePort(), await freePort()];
const proc = await startMailpathProcess({
  DATABASE_URL: db.url,
  MAILPATH_ROLES: 'api,mx,submission,outbound',
  MAILPATH_LOG_LEVEL: 'info',
  MAILPATH_HOSTNAME: HOST,
  MAILPATH_SUBMISSION_PORT: String(submissionPort),
  MAILPATH_SUBMISSION_TLS_PORT: String(submissionTlsPort),
  MAILPATH_MASTER_KEY: masterKey.toString('hex'),
  MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
  MAILPATH_DNS_SERVERS: dns.address,
  MAILPATH_CONFIG__DNS__TIMEOUT_MS: '300',
  MAILPATH_CONFIG__DNS__TRIES: '1',
  MAILPATH_OUTBOUND_RELAY: sink.address,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: MANY,
});
t.teardown(() => proc.stop());

const ok = (res: HttpsAnswer, status: number, what: string) => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}\n${proc.output()}`);
  return res.body.data;
};
const owner = ok(
  await https(proc.httpsPort, 'POST', '/auth/register', {
    body: { tenant_name: 'Logs', tenant_slug: 'logs-co', email: 'owner@logs.test', password: PASSWORD },
  }),
  201,
  'register',
);
const created = ok(await https(proc.httpsPort, 'POST', '/api-keys', { token: owner.token, body: { name: 'logs' } }), 201, 'create key');
const apiKey: string = created.key;
const domain = await verifiedSendingDomain(sql, new SealedBox(masterKey), owner.tenant_id);

interface LogLine {
  msg: string;
  role?: string;
  [field: string]: unknown;
}
const lines = (): LogLine[] =>
  proc
    .log()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
/** The log lines matching `pattern`, once at least one does (the process writes them as it goes). */
const find = (what: string, test: (l: LogLine) => boolean) =>
  pollUntil(
    what,
    () => {
      const found = lines().filter(test);
      return found.length > 0 ? found : undefined;
    },
    20_000,
  );

/** One SMTP exchange: each command's reply. */
async function exchange(port: number, commands: string[], options: { tls?: boolean; starttls?: boolean } = {}): Promise<{ code: number; text: string }[]> {
  const { client } = await RawSmtpClient.open(port, { tls: options.tls ?? false });
  const replies = [];
  try {
    await client.command('EHLO client.logs.test');
    if (options.starttls) {
      await client.startTls();
      await client.command('EHLO client.logs.test');
    }
    for (const command of commands) replies.push(await client.command(command));
  } finally {
    await client.quit();
  }
  return replies;
}

const message = (from: string, to: string) =>
  `From: ${from}\r\nTo: ${to}\r\nSubject: log test\r\nMessage-ID: <${randomBytes(6).toString('hex')}@logs.test>\r\n\r\nhello\r\n.`;

t.test('the MX: an accepted transaction, one refused at RCPT, and a connection without a transaction', async (t) => {
  const accepted = await exchange(proc.mxPort, ['MAIL FROM:<>', `RCPT TO:<fbl@${HOST}>`, 'DATA', message('abuse@isp.example', `fbl@${HOST}`)]);
  t.equal(accepted.at(-1)!.code, 250, 'the report is taken');
  const storedId = /queued as (\S+)/.exec(accepted.at(-1)!.text)?.[1];
  const refused = await exchange(proc.mxPort, ['MAIL FROM:<spammer@elsewhere.example>', 'RCPT TO:<someone@not-ours.example>']);
  t.equal(refused.at(-1)!.code, 550, 'relay refused');
  await exchange(proc.mxPort, []);

  const [ok] = await find('the accepted MX transaction', (l) => l.msg === 'smtp transaction' && l.role === 'mx' && l['outcome'] === 'accepted');
  t.match(ok, {
    client: '127.0.0.1',
    helo: 'client.logs.test',
    tls: false,
    from: '',
    rcpt: [`fbl@${HOST}`],
    rejected: [],
    stage: 'data',
    code: 250,
    inbound_id: storedId,
  });
  t.ok((ok!['size'] as number) > 0, 'with the size received');
  const [no] = await find('the refused MX transaction', (l) => l.msg === 'smtp transaction' && l.role === 'mx' && l['outcome'] === 'refused');
  t.match(no, { from: 'spammer@elsewhere.example', rcpt: [], stage: 'rcpt', code: 550, reply: /relay access denied/, size: null });
  t.match(no!['rejected'], [{ rcpt: 'someone@not-ours.example', code: 550 }]);
  const [idle] = await find('the MX connection without a transaction', (l) => l.msg === 'smtp connection without transaction' && l.role === 'mx');
  t.match(idle, { client: '127.0.0.1', helo: 'client.logs.test', code: null });
});

t.test('submission: a 535 with the key prefix at most, a MAIL refused without AUTH, an accepted message with its send ids', async (t) => {
  const wrongKey = `mp_live_WRONGK${randomBytes(24).toString('base64url')}`;
  const auth = await exchange(submissionPort, [`AUTH PLAIN ${Buffer.from(`\0${wrongKey}\0${wrongKey}`).toString('base64')}`, 'MAIL FROM:<a@b.example>'], {
    starttls: true,
  });
  t.same(
    auth.map((r) => r.code),
    [535, 530],
  );
  // Before STARTTLS AUTH is not offered, and MAIL is refused by the submission server itself.
  t.same(
    (await exchange(submissionPort, ['MAIL FROM:<a@b.example>'])).map((r) => r.code),
    [530],
  );
  const sent = await exchange(
    submissionTlsPort,
    [
      `AUTH PLAIN ${Buffer.from(`\0apikey\0${apiKey}`).toString('base64')}`,
      `MAIL FROM:<news@${domain.name}>`,
      'RCPT TO:<ok@dest.test>',
      'DATA',
      message(`news@${domain.name}`, 'ok@dest.test'),
    ],
    { tls: true },
  );
  t.same(
    sent.map((r) => r.code),
    [235, 250, 250, 354, 250],
  );

  const [failed] = await find('the failed AUTH', (l) => l.msg === 'smtp auth failed');
  t.match(failed, { role: 'submission', client: '127.0.0.1', method: 'PLAIN', key_prefix: 'mp_live_WRONGK', code: 535, key_id: null });
  t.match(failed!['tls'], { protocol: /^TLSv1\.[23]$/, cipher: /\w/ }, 'over STARTTLS');
  const [gone] = await find('the session of the failed AUTH', (l) => l.msg === 'smtp connection without transaction' && l['session'] === failed!['session']);
  t.match(gone, { auth_failures: 1, code: 535 }, 'ends on its refusal');
  const [refused] = await find('MAIL refused without AUTH', (l) => l.msg === 'smtp transaction' && l.role === 'submission' && l['code'] === 530);
  t.match(refused, { stage: 'mail', outcome: 'refused', from: 'a@b.example', tls: false, key_id: null });
  const [accepted] = await find('the accepted submission', (l) => l.msg === 'smtp transaction' && l.role === 'submission' && l['outcome'] === 'accepted');
  const [send] = await sql<{ id: string }[]>`select id from sends where to_email = 'ok@dest.test'`;
  t.match(accepted, { key_id: created.id, from: `news@${domain.name}`, rcpt: ['ok@dest.test'], code: 250, send_ids: [send!.id], message_id: /@/ });
  t.match(accepted!['tls'], { protocol: /^TLSv1\.[23]$/ }, 'implicit TLS');
  t.notOk(JSON.stringify(failed).includes(wrongKey.slice(14)), 'the rest of the key is not logged');
});

t.test('delivery attempts: one delivered, one bounced by a 550', async (t) => {
  ok(
    await https(proc.httpsPort, 'POST', '/transactional/send', {
      token: apiKey,
      body: { to: 'bounce@dest.test', from_email: `news@${domain.name}`, subject: 'bounce me', body_text: 'x' },
    }),
    202,
    'send',
  );
  const [delivered] = await find('the delivered attempt', (l) => l.msg === 'delivery attempt' && l['outcome'] === 'delivered');
  const [sent] = await sql<{ id: string }[]>`select id from sends where to_email = 'ok@dest.test'`;
  t.match(delivered, { role: 'outbound', send_id: sent!.id, to: 'ok@dest.test', host: '127.0.0.1', code: 250, attempt: 1 });
  t.type(delivered!['delay_s'], 'number', 'with the delay since acceptance');
  const [bounced] = await find('the bounced attempt', (l) => l.msg === 'delivery attempt' && l['outcome'] === 'bounced');
  t.match(bounced, { to: 'bounce@dest.test', host: '127.0.0.1', code: 550, enhanced: '5.1.1', reply: /User unknown/, bounce: 'hard' });
});

t.test('API requests: one line each, the query string secrets redacted, no header or body', async (t) => {
  const who = await https(proc.httpsPort, 'GET', `/whoami?token=${QUERY_SECRET}&key=${apiKey}&page=2`, { token: apiKey });
  t.ok(who.status >= 200, 'answered');
  ok(await https(proc.httpsPort, 'POST', '/auth/login', { body: { email: 'owner@logs.test', password: PASSWORD } }), 200, 'login');
  const [line] = await find('the request line', (l) => l.msg === 'api request' && String(l['url']).startsWith('/api/v1/whoami?'));
  t.match(line, {
    method: 'GET',
    url: '/api/v1/whoami?token=[redacted]&key=[redacted]&page=2',
    status: who.status,
    principal: `api_key:${created.id}`,
    tenant_id: owner.tenant_id,
  });
  t.type(line!['ms'], 'number');
  t.ok(line!['reqId'], 'with the request id');
  const [login] = await find('the login line', (l) => l.msg === 'api request' && l['url'] === '/api/v1/auth/login');
  t.match(login, { method: 'POST', status: 200 });
  t.match(login, { principal: null, tenant_id: null }, 'a public route has no caller');
  t.notOk(
    lines().some((l) => l.msg === 'incoming request' || l.msg === 'request completed'),
    "Fastify's own two lines are off",
  );
});

t.test('no secret anywhere in the log', async (t) => {
  if (process.env['PEEK']) require('node:fs').writeFileSync('/tmp/i13-peek.log', proc.log());
  const log = proc.log();
  t.ok(log.length > 0);
  for (const [name, secret] of Object.entries({
    'the query token': QUERY_SECRET,
    'the API key': apiKey,
    'the session token': owner.token as string,
    'the password': PASSWORD,
  })) {
    t.notOk(log.includes(secret), `${name} is not in the log`);
  }
  t.notOk(/authorization/i.test(log), 'no Authorization header');
});
