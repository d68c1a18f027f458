// Fail-closed behaviour of the MX: a plugin that stalls or throws makes the client retry (451 4.3.0), a store that fails stores nothing, and a stop lets a
// session in a transaction finish.
import t from 'tap';
import postgres from 'postgres';
import { PLUGINS } from '../../../plugins/index.js';
import { proceed, type Plugin } from '../../../mta/hooks/phases.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from './fixtures.js';

async function sendOne(port: number, to: string, subject: string) {
  const { client } = await RawSmtpClient.open(port);
  try {
    const replies = [
      await client.command('EHLO client.example'),
      await client.command('MAIL FROM:<s@sender.example>'),
      await client.command(`RCPT TO:<${to}>`),
    ];
    if (replies[2]!.code !== 250) return replies;
    replies.push(await client.command('DATA'));
    replies.push(await client.command(`${message({ Subject: subject })}.`));
    return replies;
  } finally {
    await client.quit();
  }
}

t.test('a plugin that does not answer within the hook timeout: 451 4.3.0, nothing stored', async (t) => {
  // The data phase's sender-auth slot is taken by a plugin that never answers.
  const stall = (): Plugin => ({ name: 'stall', hooks: { data: () => new Promise(() => {}) } });
  const mx = await startTestMx(t, { env: { MAILPATH_CONFIG__PLUGINS__HOOK_TIMEOUT_MS: '200' }, catalogue: { ...PLUGINS, 'sender-auth': stall } });
  const d = await tenantDomain(mx.sql);
  const replies = await sendOne(mx.port, `x@${d.name}`, 'stalled');
  t.equal(replies[4]!.code, 451);
  t.match(replies[4]!.text, /^4\.3\.0 /);
  t.same(await storedCounts(mx.sql), NOTHING_STORED);
});

t.test('a plugin that throws at RCPT: 451 4.3.0 for that recipient, never an acceptance', async (t) => {
  const broken = (): Plugin => ({
    name: 'broken',
    hooks: {
      rcpt: ({ recipient }) => {
        if (recipient.address.startsWith('boom@')) throw new Error('plugin bug');
        return proceed();
      },
    },
  });
  // Before recipient-domains (priority 20), which would accept the address.
  const mx = await startTestMx(t, { catalogue: { ...PLUGINS, limits: broken } });
  const d = await tenantDomain(mx.sql);
  const replies = await sendOne(mx.port, `boom@${d.name}`, 'x');
  t.equal(replies[2]!.code, 451);
  t.match(replies[2]!.text, /^4\.3\.0 /);
  t.equal((await sendOne(mx.port, `fine@${d.name}`, 'y'))[4]!.code, 250, 'other recipients still go through');
});

t.test('the store timing out (a table locked by someone else): 451 4.3.0', async (t) => {
  const mx = await startTestMx(t, { env: { MAILPATH_CONFIG__PLUGINS__PHASE_TIMEOUT_MS__QUEUE: '300' } });
  const d = await tenantDomain(mx.sql);
  const locker = postgres(mx.config.databaseUrl!, { max: 1, onnotice: () => {} });
  t.teardown(() => locker.end({ timeout: 5 }));
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const locked = new Promise<void>((ready) => {
    void locker.begin(async (tx) => {
      await tx`lock table inbound_messages in access exclusive mode`;
      ready();
      await held;
    });
  });
  await locked;
  const replies = await sendOne(mx.port, `x@${d.name}`, 'blocked');
  release();
  t.equal(replies[4]!.code, 451);
  t.match(replies[4]!.text, /^4\.3\.0 /);
});

t.test('a store that fails (a recipient of a tenant deleted meanwhile): 451 4.3.0 and nothing at all stored', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql);
  const gone = await tenantDomain(mx.sql);
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<s@sender.example>');
  t.equal((await client.command(`RCPT TO:<a@${d.name}>`)).code, 250);
  t.equal((await client.command(`RCPT TO:<b@${gone.name}>`)).code, 250);
  // The second tenant disappears between RCPT and the commit: its rows would break a foreign key.
  await mx.sql`delete from tenants where id = ${gone.tenantId}`;
  t.equal((await client.command('DATA')).code, 354);
  const reply = await client.command(`${message({ Subject: 'half' })}.`);
  await client.quit();
  t.equal(reply.code, 451);
  t.same(await storedCounts(mx.sql), NOTHING_STORED, 'not even the valid recipient: one transaction');
});

t.test('stop: new connections are refused, a message whose DATA is under way still gets its 250', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql);
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<s@sender.example>');
  t.equal((await client.command(`RCPT TO:<a@${d.name}>`)).code, 250);
  t.equal((await client.command('DATA')).code, 354);
  const text = message({ Subject: 'in flight' });
  client.write(text.slice(0, 20));
  const stopped = mx.mx.stop();
  await t.rejects(RawSmtpClient.open(mx.port), { message: /ECONNREFUSED/ }, 'no new connections');
  t.equal((await client.command(`${text.slice(20)}.`)).code, 250);
  await client.quit();
  await stopped;
  t.equal((await storedCounts(mx.sql))['inbound_messages'], 1);
});

t.test('stop: an idle session is told 421 at once', async (t) => {
  const mx = await startTestMx(t);
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  const stopped = mx.mx.stop();
  const reply = await client.read();
  t.equal(reply.code, 421);
  t.match(reply.text, /^4\.3\.2 /);
  await stopped;
  client.destroy();
});

t.test('the connect and helo phases: a refusal is the reply to the greeting or to EHLO/HELO; a failure there is 451 too', async (t) => {
  const gate = (): Plugin => ({
    name: 'gate',
    hooks: {
      connect: () => (refuseConnections ? { kind: 'reject', code: 554, enhanced: '5.7.1', text: 'no service for you' } : proceed()),
      helo: ({ helo }) => {
        if (helo === 'boom.example') throw new Error('plugin bug');
        return helo === 'spammer.example' ? { kind: 'reject', code: 550, enhanced: '5.7.1', text: 'go away' } : proceed();
      },
    },
  });
  let refuseConnections = false;
  const mx = await startTestMx(t, { catalogue: { ...PLUGINS, limits: gate } });
  const { client } = await RawSmtpClient.open(mx.port);
  const refused = await client.command('EHLO spammer.example');
  t.same([refused.code, refused.text], [550, 'go away'], 'EHLO refused (no enhanced code in a greeting reply, RFC 2034)');
  t.equal((await client.command('HELO boom.example')).code, 451, 'a handler that throws: 451');
  const ok = await client.command('EHLO fine.example');
  t.equal(ok.code, 250, 'the session goes on with an acceptable name');
  await client.quit();

  refuseConnections = true;
  const second = await RawSmtpClient.open(mx.port);
  t.equal(second.greeting.code, 554);
  t.match(second.greeting.text, /^5\.7\.1 no service for you/);
  second.client.destroy();
});

t.test('server limits: past max_clients a connection is told 421; with a greeting delay a client that talks first is told 421', async (t) => {
  const mx = await startTestMx(t, { env: { MAILPATH_CONFIG__INBOUND__SERVER__MAX_CLIENTS: '1', MAILPATH_CONFIG__INBOUND__SERVER__GREETING_DELAY_MS: '300' } });
  const first = await RawSmtpClient.open(mx.port);
  t.equal(first.greeting.code, 220, 'greeted after the pause');
  const second = await RawSmtpClient.open(mx.port);
  t.equal(second.greeting.code, 421);
  t.match(second.greeting.text, /^4\.3\.2 mx\.mailpath\.test Too many connected clients/, 'with an enhanced code, as every reply in place of the greeting');
  second.client.destroy();
  await first.client.quit();

  // Talking before the greeting: the command is refused and the connection closed.
  const { connect } = await import('node:net');
  const early = connect({ host: '127.0.0.1', port: mx.port });
  let received = '';
  early.on('data', (c: Buffer) => (received += c.toString()));
  early.on('error', () => {});
  await new Promise<void>((resolve) => early.once('connect', () => resolve()));
  early.write('EHLO eager.example\r\n');
  await new Promise<void>((resolve) => early.once('close', () => resolve()));
  t.match(received, /^421 /m, `the early talker is refused (${received.trim()})`);
});
