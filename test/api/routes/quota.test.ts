// GET /quota: this month's sends against the plan cap, the same count as the send routes' X-Quota-* headers; each tenant
// reads its own; every key may read it.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);
const { app, ctx, sql } = await buildTestApp(t, { env: { MAILPATH_DNS_SERVERS: dns.address } });

t.test('used of cap as the send answers count it, each tenant its own, warning at 80 %', async (t) => {
  const owner = await registerTenant(app);
  const other = await registerTenant(app);
  const sender = await createKey(app, owner, { scopes: ['transactional:send'] });
  const domain = await verifiedSendingDomain(sql, ctx.vault, owner.tenantId);

  const fresh = await call(app, 'GET', '/quota', { token: owner.token });
  t.equal(fresh.status, 200);
  const now = new Date();
  t.same(fresh.body.data, {
    month: now.toISOString().slice(0, 7),
    used: 0,
    cap: 3000,
    remaining: 3000,
    used_pct: 0,
    warning: false,
    resets_at: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
  });

  const sent = await call(app, 'POST', '/transactional/send', {
    token: sender.key,
    body: { to: 'reader@dest.example', from_email: `hello@${domain.name}`, subject: 'Hi', body_text: 'Hello' },
  });
  t.equal(sent.status, 202, JSON.stringify(sent.body));
  const after = await call(app, 'GET', '/quota', { token: owner.token });
  t.match(after.body.data, { used: 1, cap: 3000, remaining: 2999, used_pct: 0, warning: false });
  t.equal(String(after.body.data.used), sent.headers['x-quota-used'], 'the same count as X-Quota-Used');
  t.match((await call(app, 'GET', '/quota', { token: other.token })).body.data, { used: 0 }, "another tenant's sends never count");

  await sql`update tenant_monthly_usage set sent = 2400 where tenant_id = ${owner.tenantId}`;
  t.match((await call(app, 'GET', '/quota', { token: owner.token })).body.data, { used: 2400, remaining: 600, used_pct: 80, warning: true });
});

t.test('any key may read it (the send routes tell every sending key as much); no credential is 401', async (t) => {
  const owner = await registerTenant(app);
  const narrow = await createKey(app, owner, { scopes: ['contacts:read'] });
  const res = await call(app, 'GET', '/quota', { token: narrow.key });
  t.equal(res.status, 200);
  t.equal(res.body.data.cap, 3000);
  t.equal((await call(app, 'GET', '/quota')).status, 401);
});
