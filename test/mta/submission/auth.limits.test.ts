// Failed SMTP AUTH on loopback: a few per session, then 421 and the connection closed; across sessions the client address is locked (454, the key not
// checked) until the lock ends.
import t from 'tap';
import { startSubmission } from '../../../mta/submission/server.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';

const clock = new ManualClock(new Date());
const { app, ctx, sql } = await buildTestApp(t, {
  clock,
  env: {
    MAILPATH_SUBMISSION_PORT: '0',
    MAILPATH_SUBMISSION_TLS_PORT: '0',
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_CONFIG__LIMITS__SUBMISSION__MAX_AUTH_FAILURES_PER_SESSION: '3',
    MAILPATH_CONFIG__AUTH__LOGIN_PROTECTION__MAX_FAILURES_PER_SUBMISSION_ADDRESS: '4',
  },
});
const submission = stopOnTeardown(t, await startSubmission(ctx));
const tenant = await registerTenant(app);
const { key } = await createKey(app, tenant);
const WRONG = 'mp_live_nosuchkey0000000000000000';

async function session() {
  const { client } = await RawSmtpClient.open(submission.ports.implicitTls, { tls: true });
  t.teardown(() => client.destroy());
  await client.command('EHLO client.test');
  return client;
}

/** Starts each test with the address's failures forgotten. */
const forgetFailures = () => sql`delete from login_throttles`;

t.test('the third failed AUTH of a session is answered 421 4.7.0 and the connection closed', async (t) => {
  await forgetFailures();
  const client = await session();
  t.match(await client.auth(WRONG), { code: 535, text: /^5\.7\.8 / });
  t.match(await client.auth(WRONG), { code: 535 });
  t.match(await client.auth(WRONG), { code: 421, text: '4.7.0 too many failed authentication attempts: closing connection' });
  await t.rejects(client.command('NOOP'), /connection closed/, 'the server closed the connection');
  // A new session of the same address starts with a fresh count (the address is below its limit of 4).
  const next = await session();
  t.match(await next.auth(key), { code: 235 });
  await next.quit();
});

t.test('failures over several sessions lock the address: 454 4.7.0 even for a correct key, until the lock ends', async (t) => {
  await forgetFailures();
  for (let i = 0; i < 2; i++) {
    const client = await session();
    t.match(await client.auth(WRONG), { code: 535 });
    t.match(await client.auth(WRONG), { code: 535 });
    await client.quit();
  }
  // Four failures from 127.0.0.1 within the window: the address is locked for lockout_seconds (30).
  const locked = await session();
  t.match(
    await locked.auth(key),
    { code: 454, text: /^4\.7\.0 too many failed authentication attempts from this address: retry after 30s/ },
    'the correct key does not reveal itself',
  );
  t.match(await locked.auth(WRONG), { code: 454 }, 'nor does a wrong one');
  t.match(await locked.auth(key), { code: 421 }, 'answers during the lock count towards the session limit');
  const [row] = await sql<{ failures: number }[]>`select failures from login_throttles where key = 'smtp-auth:127.0.0.1'`;
  t.equal(row!.failures, 4, 'attempts during the lock are not counted (nothing was checked)');

  // Dashboard sign-ins of the same address are counted apart and go on.
  const login = await call(app, 'POST', '/auth/login', { body: { email: tenant.email, password: tenant.password } });
  t.equal(login.status, 200, 'the API login throttle is not the SMTP one');
  t.equal((await sql`select 1 from login_throttles where key = 'ip:127.0.0.1'`).length, 0);

  clock.advance(29_000);
  const still = await session();
  t.match(await still.auth(key), { code: 454, text: /retry after 1s/ });
  await still.quit();
  clock.advance(1_000);
  const after = await session();
  t.match(await after.auth(key), { code: 235 }, 'a correct key works once the lock has ended');
  await after.quit();
});

t.test('a further failure in the same window (after the lock above) locks again for twice as long', async (t) => {
  const client = await session();
  t.match(await client.auth(WRONG), { code: 535 });
  t.match(await client.auth(key), { code: 454, text: /retry after 60s/ });
  await client.quit();
});
