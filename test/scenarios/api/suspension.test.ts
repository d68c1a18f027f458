// Tenant suspension through the super-admin routes: sends (API, SMTP submission, campaign fan-out, scheduled campaigns) and logins are refused while
// suspended and resume after; audit rows and chat notifications.
import nodemailer from 'nodemailer';
import t from 'tap';
import { startSubmission } from '../../../mta/submission/server.js';
import { call, createKey, superAdminToken, SUPER_ADMIN } from '../../helpers/app.js';
import { campaignApp, createCampaign, drain, listOf, readCampaign, sendNow, sender } from '../../helpers/campaigns.js';
import { stopOnTeardown } from '../../helpers/net.js';

const s = await campaignApp(t, {
  env: {
    MAILPATH_SUBMISSION_PORT: '0',
    MAILPATH_SUBMISSION_TLS_PORT: '0',
    MAILPATH_BIND_HOST: '127.0.0.1',
    // Nothing listens there: the notifications are only queued (no chat worker runs in this test).
    MAILPATH_CHAT_WEBHOOK_URL: 'http://127.0.0.1:9/chat',
  },
});
const submission = stopOnTeardown(t, await startSubmission(s.ctx));
const admin = await superAdminToken(s.app);

async function smtpSend(key: string, from: string, to: string) {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: submission.ports.implicitTls,
    secure: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'anything', pass: key },
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10000,
  });
  try {
    return await transport.sendMail({ from, to, subject: 'via SMTP', text: 'hello' });
  } finally {
    transport.close();
  }
}

const chatTexts = async () =>
  (await s.sql<{ text: string }[]>`select data->>'text' as text from pgboss.job where name = 'notify.chat' order by created_on`).map((r) => r.text);

t.test('suspended: sends and logins refused with clear errors; unsuspended: everything resumes', async (t) => {
  const snd = await sender(s);
  const key = await createKey(s.app, snd.tenant);
  const tenantId = snd.tenant.tenantId;
  const apiSend = (to: string) =>
    call(s.app, 'POST', '/transactional/send', { token: key.key, body: { from_email: snd.from, to, subject: 'Hi', body_text: 'Hi' } });
  const login = () => call(s.app, 'POST', '/auth/login', { body: { email: snd.tenant.email, password: snd.tenant.password } });

  // A campaign mid-fan-out and a scheduled one, both waiting on the suspension.
  const { listId } = await listOf(s.sql, tenantId, ['r1@example.test', 'r2@example.test', 'r3@example.test']);
  const running = await createCampaign(s, snd.tenant.token, { list_id: listId, from_email: snd.from });
  const scheduled = await createCampaign(s, snd.tenant.token, { list_id: listId, from_email: snd.from, name: 'Later' });
  t.equal(
    (
      await call(s.app, 'POST', `/campaigns/${scheduled.id}/schedule`, {
        token: snd.tenant.token,
        body: { scheduled_at: new Date(Date.now() + 60_000).toISOString() },
      })
    ).status,
    200,
  );

  // Launched before the suspension; its fan-out runs after it.
  await sendNow(s, snd.tenant.token, running.id);
  const res = await call(s.app, 'POST', `/admin/tenants/${tenantId}/suspend`, { token: admin, body: { reason: 'phishing reports' } });
  t.equal(res.status, 200);
  t.same(res.body.data, { status: 'suspended' });

  const [audit] = await s.sql`select actor_type, metadata from audit_events where tenant_id = ${tenantId} and action = 'tenant.suspended'`;
  t.match(audit, { actor_type: 'user', metadata: { reason: 'phishing reports', previous_status: 'active' } });
  const texts = await chatTexts();
  t.equal(texts.length, 1, 'one chat notification queued');
  t.match(texts[0], new RegExp(`tenant .*${snd.tenant.slug}.* suspended by ${SUPER_ADMIN.email.replace('.', '\\.')}: phishing reports`));

  const blockedLogin = await login();
  t.equal(blockedLogin.status, 403, 'login → 403');
  t.equal(blockedLogin.body.error, 'forbidden');
  t.match(blockedLogin.body.message, /suspended/);
  const session = await call(s.app, 'GET', '/whoami', { token: snd.tenant.token });
  t.equal(session.status, 403, 'a session already held → 403');
  t.match(session.body.message, /suspended/);

  const blockedSend = await apiSend('reader@example.test');
  t.equal(blockedSend.status, 403, 'API send → 403');
  t.equal(blockedSend.body.error, 'forbidden');
  t.match(blockedSend.body.message, /suspended/);
  await t.rejects(
    smtpSend(key.key, snd.from, 'reader@example.test'),
    { responseCode: 550, message: /550 5\.7\.1 account suspended/ },
    'SMTP submission → 550 5.7.1',
  );
  t.equal((await s.sql`select 1 from sends where tenant_id = ${tenantId}`).length, 0, 'nothing stored');

  t.equal(await drain(s, running.id), 'waiting', 'the fan-out waits');
  const [waiting] = await s.sql`select status, waiting_reason from campaigns where id = ${running.id}`;
  t.same(waiting, { status: 'sending', waiting_reason: 'tenant_suspended' });
  // The scheduled campaign's time comes while suspended: it starts, and waits the same way.
  await s.sql`update campaigns set scheduled_at = now() - interval '1 second' where id = ${scheduled.id}`;
  t.equal(await drain(s, scheduled.id), 'waiting', 'the scheduled campaign waits too');
  t.equal((await s.sql`select 1 from sends where tenant_id = ${tenantId}`).length, 0, 'no campaign send while suspended');

  const again = await call(s.app, 'POST', `/admin/tenants/${tenantId}/suspend`, { token: admin });
  t.same(again.body.data, { status: 'suspended' }, 'suspending again answers the same');
  t.equal((await s.sql`select 1 from audit_events where action = 'tenant.suspended'`).length, 1, '…and writes nothing');

  const un = await call(s.app, 'POST', `/admin/tenants/${tenantId}/unsuspend`, { token: admin });
  t.equal(un.status, 200);
  t.same(un.body.data, { status: 'active' });
  t.equal((await s.sql`select 1 from audit_events where tenant_id = ${tenantId} and action = 'tenant.unsuspended'`).length, 1, 'unsuspension audited');
  t.match((await chatTexts())[1], /unsuspended by/);
  const [tenantRow] = await s.sql`select status, suspended_at, suspension_reason from tenants where id = ${tenantId}`;
  t.same(tenantRow, { status: 'active', suspended_at: null, suspension_reason: null }, 'the reason is cleared');
  // The waiting campaigns are queued again now, not at their next recheck.
  const queued = await s.sql<{ campaign_id: string }[]>`
    select distinct data->>'campaign_id' as campaign_id from pgboss.job
    where name = 'campaign-fanout' and state = 'created' and start_after <= now() + interval '1 second'`;
  t.ok(queued.some((r) => r.campaign_id === running.id) && queued.some((r) => r.campaign_id === scheduled.id), 'both fan-outs queued to run now');

  t.equal((await login()).status, 200, 'login works again');
  t.equal((await apiSend('reader@example.test')).status, 202, 'API send accepted again');
  const info = await smtpSend(key.key, snd.from, 'reader2@example.test');
  t.match(info.response, /^250/, 'SMTP submission accepted again');
  t.equal(await drain(s, running.id), 'completed', 'the campaign goes on where it stopped');
  t.equal(await drain(s, scheduled.id), 'completed');
  t.match(await readCampaign(s, snd.tenant.token, running.id), { status: 'sent' });
  const [n] = await s.sql<{ n: number }[]>`select count(*)::int as n from sends where campaign_id = any(${[running.id, scheduled.id]}::uuid[])`;
  t.equal(n!.n, 6, 'each campaign sent to its three recipients once');
});

t.test('suspend and unsuspend: unknown tenant 404, bad body 400/422', async (t) => {
  for (const action of ['suspend', 'unsuspend']) {
    const res = await call(s.app, 'POST', `/admin/tenants/00000000-0000-4000-8000-000000000000/${action}`, { token: admin });
    t.equal(res.status, 404, `${action} unknown → 404`);
    t.equal(res.body.error, 'not_found');
  }
  const snd = await sender(s);
  const extra = await call(s.app, 'POST', `/admin/tenants/${snd.tenant.tenantId}/suspend`, { token: admin, body: { reason: 'x', until: 'never' } });
  t.equal(extra.status, 400, 'an unexpected field → 400');
  const long = await call(s.app, 'POST', `/admin/tenants/${snd.tenant.tenantId}/suspend`, { token: admin, body: { reason: 'x'.repeat(501) } });
  t.equal(long.status, 422, 'a reason over 500 characters → 422');
  t.equal(long.body.error, 'validation_error');
});
