// Durability of the MX: a client that goes away before the end of DATA leaves nothing; every message answered 250 survives a SIGKILL of the real `mailpath`
// process and is delivered to the webhook after the restart.
import t from 'tap';
import { createHmac, randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import postgres from 'postgres';
import { SealedBox } from '../../../shared/kernel/secrets/sealed-box.js';
import { createTestDatabase } from '../../helpers/db.js';
import { startMailpathProcess, type MailpathProcess } from '../../helpers/mailpath-process.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { configureWebhook } from '../../jobs/inbound-webhooks/fixture.js';
import { NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from '../../mta/inbound/fixtures.js';

t.test('a client that disconnects in the middle of DATA (or before it) leaves no rows and no jobs', async (t) => {
  const mx = await startTestMx(t);
  const d = await tenantDomain(mx.sql, { mailboxes: ['ann'] });
  for (const cut of ['mid-data', 'after-rcpt', 'after-data-command'] as const) {
    const { client } = await RawSmtpClient.open(mx.port);
    await client.command('EHLO client.example');
    await client.command('MAIL FROM:<s@sender.example>');
    t.equal((await client.command(`RCPT TO:<ann@${d.name}>`)).code, 250);
    if (cut !== 'after-rcpt') t.equal((await client.command('DATA')).code, 354);
    if (cut === 'mid-data') client.write(message({ Subject: 'cut short' }, 'half a message\r\n'.repeat(200)));
    client.destroy();
  }
  // A complete message afterwards proves the server went on and had time to store the earlier ones, had it wrongly done so.
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<whole@sender.example>');
  await client.command(`RCPT TO:<ann@${d.name}>`);
  await client.command('DATA');
  t.equal((await client.command(`${message({ Subject: 'whole' })}.`)).code, 250);
  await client.quit();
  const counts = await storedCounts(mx.sql);
  t.same(
    counts,
    { ...NOTHING_STORED, inbound_messages: 1, inbound_recipients: 1, mailbox_messages: 1, inbound_webhook_deliveries: 1 },
    'only the whole message',
  );
  t.same(
    (await mx.sql`select mail_from from inbound_messages`).map((r) => r['mail_from']),
    ['whole@sender.example'],
  );
});

t.test('every message answered 250 is there, with its pending webhook job, after a SIGKILL, and the restarted process POSTs it', async (t) => {
  const db = await createTestDatabase();
  const sql = postgres(db.url, { max: 2, onnotice: () => {} });
  const processes: MailpathProcess[] = [];
  t.teardown(async () => {
    for (const p of processes) await p.stop();
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const masterKey = randomBytes(32).toString('hex');
  const env = {
    DATABASE_URL: db.url,
    MAILPATH_ROLES: 'api,mx',
    MAILPATH_HOSTNAME: 'mx.crash.test',
    MAILPATH_MASTER_KEY: masterKey,
    MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
    // No DNS server answers here: the sender checks time out quickly, and must not lose mail for it.
    MAILPATH_DNS_SERVERS: '127.0.0.1:9',
    MAILPATH_CONFIG__DNS__TIMEOUT_MS: '100',
    MAILPATH_CONFIG__DNS__TRIES: '1',
  };
  const first = await startMailpathProcess(env);
  processes.push(first);
  const d = await tenantDomain(sql, { mailboxes: ['ann'] });
  // The webhook as the API stores it (secret sealed under the process's master key), at a real receiver.
  const receiver = await startWebhookReceiver(t);
  const secret = await configureWebhook(sql, new SealedBox(Buffer.from(masterKey, 'hex')), d.tenantId, { url: receiver.url });

  const accepted: string[] = [];
  let stop = false;
  const sender = async (n: number) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: first.mxPort,
      secure: false,
      ignoreTLS: true,
      pool: false,
      connectionTimeout: 5000,
      socketTimeout: 10000,
    });
    for (let i = 0; i < 40 && !stop; i++) {
      try {
        const info = await transport.sendMail({
          from: `s${n}@sender.example`,
          to: i % 2 ? `ann@${d.name}` : `hook@${d.name}`,
          subject: `m ${n}-${i}`,
          text: 'x'.repeat(2000),
        });
        const id = /queued as ([0-9a-f-]{36})/.exec(info.response)?.[1];
        if (id) accepted.push(id);
        // Killed right after a 250: nothing may be lost that was acknowledged.
        if (accepted.length >= 25 && !stop) {
          stop = true;
          await first.kill();
        }
      } catch {
        // The connections cut by the kill: those messages were not acknowledged.
      }
    }
    transport.close();
  };
  await Promise.all([0, 1, 2, 3].map(sender));
  t.ok(accepted.length >= 25, `${accepted.length} messages answered 250 before the kill`);
  t.equal(first.child.signalCode, 'SIGKILL', 'the process was killed, not stopped');

  t.equal(receiver.requests.length, 0, 'the first process had no outbound role: nothing was POSTed before the kill');
  // What the kill left behind, read before anything restarts (the restarted process's workers would start delivering it).
  const stored = await sql<{ id: string; recipient: string; deliveries: number; copies: number }[]>`
    select m.id, r.recipient,
           (select count(*)::int from inbound_webhook_deliveries w
             where w.inbound_recipient_id = r.id and w.status = 'pending' and w.next_attempt_at <= now()) as deliveries,
           (select count(*)::int from mailbox_messages b where b.inbound_message_id = m.id) as copies
      from inbound_messages m join inbound_recipients r on r.message_id = m.id
     where m.id = any(${accepted}::uuid[])`;
  t.equal(stored.length, accepted.length, 'every acknowledged message is stored');
  t.ok(
    stored.every((s) => s.deliveries === 1),
    'each with its pending webhook delivery, due in the outbox',
  );
  t.ok(
    stored.filter((s) => s.recipient.startsWith('ann@')).every((s) => s.copies === 1),
    'mailbox recipients with their copy',
  );
  t.ok(stored.every((s) => s.recipient.length > 0));

  // The restarted process also runs the webhook workers (loopback receiver allowed for this test only).
  const second = await startMailpathProcess({
    ...env,
    MAILPATH_ROLES: 'api,mx,outbound',
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
    MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
    MAILPATH_CONFIG__WEBHOOKS__WORKERS__POLL_INTERVAL_MS: '500',
  });
  processes.push(second);

  // Delivered: each acknowledged message reaches the receiver, signed, once per delivery id.
  const posted = await pollUntil(
    'a POST of every acknowledged message',
    () => {
      const ids = new Set(receiver.requests.map((r) => /^Received: [^]*? id ([0-9a-f-]{36})/.exec(r.body.toString('latin1'))?.[1]));
      return accepted.every((id) => ids.has(id)) ? ids : undefined;
    },
    30_000,
  );
  t.ok(
    accepted.every((id) => posted.has(id)),
    `all ${accepted.length} acknowledged messages were POSTed after the restart`,
  );
  const sign = (body: Buffer) => `hmac-sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  t.ok(
    receiver.requests.every((r) => r.headers['x-mp-inbound-sig'] === sign(r.body)),
    'every POST verifies with the tenant secret',
  );

  // The restarted process receives again.
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: second.mxPort,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 5000,
    socketTimeout: 10000,
  });
  const info = await transport.sendMail({ from: 'after@sender.example', to: `ann@${d.name}`, subject: 'after the restart', text: 'hello' });
  transport.close();
  t.match(info.response, /^250 /);
});
