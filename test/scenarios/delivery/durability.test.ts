// Crash durability: SIGKILL a real `mailpath start` while it accepts and delivers; after a restart every accepted message is delivered, and duplicates come
// only from sends that were mid-delivery.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { SMTPServer } from 'smtp-server';
import { generateDkimKey, storeKey } from '../../../shared/deliverability/domains/dkim-keys.js';
import { SealedBox } from '../../../shared/kernel/secrets/sealed-box.js';
import { createTestDatabase } from '../../helpers/db.js';
import { https, startMailpathProcess, type MailpathProcess } from '../../helpers/mailpath-process.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const SENDERS = 16;
const ACCEPT_BEFORE_KILL = 150;

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});

// The receiving server: a little slow per message, so some deliveries are always in flight at the kill.
const received = new Map<string, number>();
/** Messages whose bytes reached the receiver: only these can have been delivered without Mailpath knowing. */
const arrived = new Set<string>();
const sink = new SMTPServer({
  authOptional: true,
  disabledCommands: ['AUTH', 'STARTTLS'],
  logger: false,
  onData(stream, _session, callback) {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const id = /^Message-ID: <([^@>]+)@/im.exec(Buffer.concat(chunks).toString('latin1'))?.[1];
      if (id) arrived.add(id);
      setTimeout(() => {
        if (id) received.set(id, (received.get(id) ?? 0) + 1);
        callback();
      }, 15);
    });
  },
});
// Connections of the killed process are reset: that is expected here, not a test failure.
sink.on('error', () => {});
await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', () => resolve()));
t.teardown(() => new Promise<void>((resolve) => sink.close(() => resolve())));
const sinkPort = (sink.server.address() as { port: number }).port;

const masterKey = randomBytes(32).toString('hex');
const env = {
  DATABASE_URL: db.url,
  MAILPATH_ROLES: 'api,outbound,scheduler',
  MAILPATH_MASTER_KEY: masterKey,
  MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
  MAILPATH_OUTBOUND_RELAY: `127.0.0.1:${sinkPort}`,
  MAILPATH_DB_POOL_SIZE: '8',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: '1000000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '1000000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '1000000',
  MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[1000000]',
  // A dead process's jobs are taken over within seconds rather than minutes.
  MAILPATH_CONFIG__DELIVERY__WORKERS__JOB_EXPIRE_SECONDS: '3',
  MAILPATH_CONFIG__DELIVERY__WORKERS__QUEUE_MAINTENANCE_SECONDS: '1',
};

const processes: MailpathProcess[] = [];
t.teardown(async () => {
  for (const p of processes) await p.stop();
});

t.test('every message answered 202 before a SIGKILL is delivered after the restart', async (t) => {
  const first = await startMailpathProcess(env);
  processes.push(first);
  const registered = await https(first.httpsPort, 'POST', '/auth/register', {
    body: { tenant_name: 'Crash', tenant_slug: 'crash', email: 'owner@crash.test', password: 'Correct-horse-42' },
  });
  t.equal(registered.status, 201, first.output());
  const tenantId = registered.body.data.tenant_id as string;
  const key = (await https(first.httpsPort, 'POST', '/api-keys', { token: registered.body.data.token, body: { name: 'crash' } })).body.data.key as string;
  await sql`insert into plans (id, name, monthly_send_cap) values ('crash', 'Crash', 1000000)`;
  await sql`update tenants set plan_id = 'crash' where id = ${tenantId}`;
  const [domain] = await sql<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at)
    values (${tenantId}, 'crash.test', 'crash.test', now(), now(), now()) returning id`;
  await storeKey(sql, new SealedBox(Buffer.from(masterKey, 'hex')), {
    tenantId,
    domainId: domain!.id,
    selector: 's1',
    key: await generateDkimKey(1024),
    state: 'active',
    at: new Date(),
  });

  // Load: SENDERS clients send until the kill; only 202 answers count as accepted.
  const accepted: string[] = [];
  let killed = false;
  const client = async (n: number) => {
    for (let i = 0; i < 1000 && !killed; i++) {
      const res = await https(first.httpsPort, 'POST', '/transactional/send', {
        token: key,
        body: { to: `r${n}-${i}@dest.test`, from_email: 'hello@crash.test', subject: `m ${n}-${i}`, body_text: 'durable' },
      }).catch(() => undefined);
      if (res?.status === 202) accepted.push(res.body.data.message_id);
      else if (!killed && res) throw new Error(`send answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
  };
  const load = Promise.all(Array.from({ length: SENDERS }, (_, n) => client(n)));
  for (let i = 0; i < 600 && accepted.length < ACCEPT_BEFORE_KILL; i++) await sleep(50);
  killed = true;
  await first.kill();
  await load;
  t.ok(accepted.length >= ACCEPT_BEFORE_KILL, `${accepted.length} messages accepted before the kill`);

  const statuses = await sql<{ status: string; n: number }[]>`select status, count(*)::int as n from sends group by status`;
  // Mid-delivery at the kill: the receiver has the bytes, Mailpath had not yet recorded the delivery.
  const recorded = new Set((await sql<{ id: string }[]>`select id from sends where status = 'delivered'`).map((r) => r.id));
  const inFlight = new Set([...arrived].filter((id) => !recorded.has(id)));
  t.comment(`at the kill: ${JSON.stringify(statuses)}; ${received.size} received by the sink; ${inFlight.size} mid-delivery`);

  const second = await startMailpathProcess(env);
  processes.push(second);
  const missing = () => accepted.filter((id) => !received.has(id));
  const unrecorded = async () =>
    sql<{ id: string; status: string }[]>`select id, status from sends where id = any(${accepted}::uuid[]) and status <> 'delivered'`;
  // Bounded: a dead process's jobs come back after their expiry (3 s here) and the next maintenance.
  for (let i = 0; i < 900 && (missing().length > 0 || (await unrecorded()).length > 0); i++) await sleep(100);
  t.same(missing(), [], 'every accepted message reached the receiving server');
  t.same(await unrecorded(), [], 'and is marked delivered');

  const duplicates = [...received].filter(([, n]) => n > 1).map(([id]) => id);
  t.comment(`${duplicates.length} delivered twice (mid-delivery at the kill: ${inFlight.size})`);
  t.same(
    duplicates.filter((id) => !inFlight.has(id)),
    [],
    'only messages mid-delivery at the kill may arrive twice',
  );
  await second.stop();
});
