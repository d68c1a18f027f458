// The system mailer: sends as the super-admin tenant through the outbound path, or logs; never throws.
import { Writable } from 'node:stream';
import t from 'tap';
import { simpleParser } from 'mailparser';
import { createLogger } from '../../../../shared/kernel/log.js';
import { suppress } from '../../../../shared/audiences/suppressions/service.js';
import { loadConfig, type Env } from '../../../../shared/config/index.js';
import { buildTestApp, type TestApp, type TestLike } from '../../../helpers/app.js';
import { verifiedSendingDomain } from '../../../helpers/sending-domain.js';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { systemMailText } from '../../../helpers/system-mail.js';

async function mailerApp(t: TestLike, env: Env = {}): Promise<TestApp & { logs(): Record<string, any>[]; logLines(): string[]; platformId: string }> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const app = await buildTestApp(t, { env, log: createLogger('info', stream) });
  const [tenant] = await app.sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  const logs = () =>
    lines
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
  return { ...app, logs, logLines: () => lines, platformId: tenant!.id };
}

const message = {
  to: 'Ann@Example.test',
  subject: 'Welcome to the team',
  text: 'Accept: https://x.test/accept?t=1',
  html: '<p><a href="https://x.test/accept?t=1">Accept</a></p>',
};

t.test('without MAILPATH_SYSTEM_SENDER the message goes to the outbox file the log names; the link never reaches the log', async (t) => {
  const test = await mailerApp(t);
  t.same(await test.ctx.systemMail.send(message), { sent: false });
  const entry = test.logs().find((l) => l['system_mail']);
  t.match(entry, {
    level: 30,
    reason: /MAILPATH_SYSTEM_SENDER is not set/,
    system_mail: { to: message.to, subject: message.subject, file: /outbox\/.+\.eml$/ },
  });
  t.ok(entry!['system_mail'].file.startsWith(join(test.dataDir, 'outbox')), 'in the data dir');
  t.equal(statSync(entry!['system_mail'].file).mode & 0o777, 0o600, 'readable by the owner only');
  const file = systemMailText(entry);
  t.match(file, /^To: Ann@Example\.test\r\nSubject: Welcome to the team\r\n/);
  t.match(file, /\r\n\r\nAccept: https:\/\/x\.test\/accept\?t=1\r\n$/, 'the text, link included');
  t.notOk(
    test.logLines().some((l) => l.includes('accept?t=1')),
    'no log line holds the link',
  );
});

t.test('with a verified sender domain: a live send of the super-admin tenant, text and HTML', async (t) => {
  const test = await mailerApp(t, { MAILPATH_SYSTEM_SENDER: 'team@ops.platform.test' });
  await verifiedSendingDomain(test.sql, test.ctx.vault, test.platformId, 'ops.platform.test');
  const result = await test.ctx.systemMail.send(message);
  t.equal(result.sent, true);
  const [row] = await test.sql<{ tenant_id: string; to_email: string; mode: string; status: string; message: Buffer }[]>`
    select tenant_id, to_email, mode, status, message from sends where id = ${result.send_id!}`;
  t.match(row, { tenant_id: test.platformId, to_email: 'ann@example.test', mode: 'live', status: 'queued' });
  const parsed = await simpleParser(row!.message);
  t.match(parsed.text, /https:\/\/x\.test\/accept\?t=1/);
  t.match(String(parsed.html), /<a href="https:\/\/x\.test\/accept\?t=1">/);
});

t.test('a suppressed recipient is dropped (not sent); a bad address is logged, never thrown', async (t) => {
  const test = await mailerApp(t, { MAILPATH_SYSTEM_SENDER: 'team@ops.platform.test' });
  await verifiedSendingDomain(test.sql, test.ctx.vault, test.platformId, 'ops.platform.test');
  await suppress(test.sql, test.platformId, { email: 'gone@example.test', reason: 'manual', source: 'api', at: new Date() });
  const dropped = await test.ctx.systemMail.send({ ...message, to: 'gone@example.test' });
  t.equal(dropped.sent, false);
  t.ok(dropped.send_id, 'the dropped send is recorded');
  t.same(await test.ctx.systemMail.send({ ...message, to: 'not an address' }), { sent: false });
  t.ok(test.logs().some((l) => l['msg'] === 'system e-mail failed' && l['level'] === 50));
});

t.test('sendLater runs in the background; drain waits for it', async (t) => {
  const test = await mailerApp(t);
  test.ctx.systemMail.sendLater(message);
  test.ctx.systemMail.sendLater({ ...message, to: 'bob@example.test' });
  await test.ctx.systemMail.drain();
  t.equal(test.logs().filter((l) => l['system_mail']).length, 2);
});

t.test('MAILPATH_SYSTEM_SENDER must be an address; it is kept lower-cased', async (t) => {
  t.equal(loadConfig({ MAILPATH_SYSTEM_SENDER: 'No-Reply@Mail.Example' }).systemSender, 'no-reply@mail.example');
  t.equal(loadConfig({}).systemSender, undefined);
  t.throws(() => loadConfig({ MAILPATH_SYSTEM_SENDER: 'not-an-address' }), { name: 'ConfigError', message: /MAILPATH_SYSTEM_SENDER/ });
});
