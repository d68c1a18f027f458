// /analytics/esp-scores (custom domains classified by their MX hosts through a loopback DNS server, cached with a TTL; scores, deferrals, order, window),
// /analytics/esp-suppressions (active and last-7-day, newest first) and /analytics/trust-score, each tenant seeing only its own.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { PROVIDER_TTL_MS } from '../../../shared/engagement/analytics/provider-classifier.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);
const clock = new ManualClock(new Date('2026-05-06T10:00:00Z'));
const { app, ctx, sql } = await buildTestApp(t, { clock, env: { MAILPATH_DNS_SERVERS: dns.address } });
const owner = await registerTenant(app);
const other = await registerTenant(app);
const ownerKey = (await createKey(app, owner, { scopes: ['events:read', 'reputation:read'] })).key;
const otherKey = (await createKey(app, other, { scopes: ['events:read', 'reputation:read'] })).key;
const admin = await superAdminToken(app);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** One send to `recipient` with its outcome events, `ageMs` ago (events only: the rollups read nothing else). */
async function mail(
  tenantId: string,
  recipient: string,
  ageMs: number,
  outcome: 'delivered' | 'bounce',
  extra: ('open' | 'machine-open' | 'complaint' | 'deferral')[] = [],
) {
  const at = new Date(clock.now().getTime() - ageMs);
  const insert = async (type: string, detail: Record<string, unknown> = {}) => sql`
    insert into events (id, tenant_id, type, subtype, send_id, recipient, detail, occurred_at)
    values (${randomUUID()}, ${tenantId}, ${type}, ${type === 'bounce' ? 'hard' : null}, null, ${recipient}, ${sql.json(detail as never)}, ${at})`;
  await insert('send', { status: 'queued' });
  await insert(outcome);
  for (const e of extra) {
    if (e === 'open') await insert('open', { machine: false });
    if (e === 'machine-open') await insert('open', { machine: true });
    if (e === 'complaint') await insert('complaint');
    if (e === 'deferral') await insert('deferred', { reason: 'retry' });
  }
}

async function refresh() {
  const res = await call(app, 'POST', '/admin/workers/analytics-rollup/run-now', { token: admin });
  if (res.status !== 200 || res.body.data.outcome !== 'ok') throw new Error(`run-now: ${res.status} ${JSON.stringify(res.body)}`);
}

const scores = async (key = ownerKey) => {
  const res = await call(app, 'GET', '/analytics/esp-scores', { token: key });
  if (res.status !== 200) throw new Error(`esp-scores: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { items: { esp: string; score: number | null; [k: string]: unknown }[]; window_end: string };
};

t.test('esp-scores: providers by domain and by MX host, scores, order, window', async (t) => {
  dns.setMx('workspace.test', [
    { exchange: 'aspmx.l.google.com', priority: 1 },
    { exchange: 'alt1.aspmx.l.google.com', priority: 5 },
  ]);
  dns.setMx('m365.test', [{ exchange: 'm365-test.mail.protection.outlook.com', priority: 0 }]);
  dns.setMx('own-mx.test', [{ exchange: 'mx.own-mx.test', priority: 10 }]);
  // Proton is the best-priority host: it decides, whatever the backup is.
  dns.setMx('mixed.test', [
    { exchange: 'mail.protonmail.ch', priority: 10 },
    { exchange: 'mx.other.example', priority: 20 },
  ]);

  // gmail: gmail.com and a Workspace domain; 10 delivered, 1 opened by a person, 1 by a machine, 1 deferred twice first.
  const gmailExtra = (i: number) =>
    i === 0 ? ['open' as const] : i === 1 ? ['machine-open' as const] : i === 2 ? ['deferral' as const, 'deferral' as const] : [];
  for (let i = 0; i < 5; i++) await mail(owner.tenantId, `g${i}@gmail.com`, 2 * HOUR, 'delivered', gmailExtra(i));
  for (let i = 0; i < 5; i++) await mail(owner.tenantId, `w${i}@Workspace.test`, 3 * DAY, 'delivered');
  // outlook: a Microsoft 365 domain and hotmail.com: 4 delivered with a complaint among them, 1 bounce.
  for (let i = 0; i < 3; i++) await mail(owner.tenantId, `m${i}@m365.test`, 2 * HOUR, 'delivered', i === 0 ? ['complaint'] : []);
  await mail(owner.tenantId, 'h@hotmail.com', 2 * HOUR, 'delivered');
  await mail(owner.tenantId, 'h2@hotmail.com', 2 * HOUR, 'bounce', ['deferral']);
  // proton through its MX; other: a domain with its own MX and one without any.
  await mail(owner.tenantId, 'p@mixed.test', HOUR, 'delivered', ['open']);
  await mail(owner.tenantId, 'o@own-mx.test', HOUR, 'bounce');
  await mail(owner.tenantId, 'n@no-mx.test', HOUR, 'delivered');
  // Outside the 30-day window, and another tenant's mail: not counted.
  await mail(owner.tenantId, 'old@yahoo.com', 31 * DAY, 'bounce', ['deferral']);
  await mail(other.tenantId, 'x@yahoo.com', HOUR, 'bounce', ['deferral']);
  await refresh();

  const data = await scores();
  t.equal(data.window_end, clock.now().toISOString());
  t.same(
    data.items.map((i) => i.esp),
    ['proton', 'gmail', 'outlook', 'aol', 'fastmail', 'icloud', 'yahoo', 'other'],
    'by score, then unscored by name, other last',
  );
  const by = new Map(data.items.map((i) => [i.esp, i]));
  t.same(
    by.get('gmail'),
    {
      esp: 'gmail',
      sent: 10,
      delivered: 10,
      deferred: 2,
      bounced: 0,
      complained: 0,
      engaged: 1,
      delivery_rate: 1,
      bounce_rate: 0,
      complaint_rate: 0,
      engagement_rate: 0.1,
      score: 95,
      tier: 'excellent',
    },
    'the machine open is not engagement; Workspace counts as gmail; each deferral counts, in no rate',
  );
  t.match(by.get('outlook'), {
    sent: 5,
    delivered: 4,
    deferred: 1,
    bounced: 1,
    complained: 1,
    delivery_rate: 0.8,
    bounce_rate: 0.2,
    complaint_rate: 0.25,
    score: 0,
    tier: 'at-risk',
  });
  t.match(by.get('proton'), { sent: 1, delivered: 1, engaged: 1, score: 100 });
  t.match(by.get('other'), { sent: 2, delivered: 1, bounced: 1, delivery_rate: 0.5 });
  t.match(by.get('yahoo'), { sent: 0, deferred: 0, score: null, tier: null, delivery_rate: null }, 'a deferral outside the window is not counted');

  // Cached: the look-ups are not repeated, and a moved MX is seen only once the TTL has passed.
  const asked = dns.queries();
  dns.setMx('workspace.test', [{ exchange: 'in1-smtp.messagingengine.com', priority: 10 }]);
  t.same((await scores()).items.map((i) => i.esp).slice(0, 2), ['proton', 'gmail']);
  t.equal(dns.queries(), asked, 'no DNS query while the answers are cached');
  clock.advance(PROVIDER_TTL_MS + 1000);
  const moved = new Map((await scores()).items.map((i) => [i.esp, i]));
  t.ok(dns.queries() > asked, 'asked again after the TTL');
  t.match(moved.get('fastmail'), { sent: 5, delivered: 5 }, 'the Workspace domain now hosted at Fastmail');
  t.match(moved.get('gmail'), { sent: 5 });

  // A DNS failure is not an answer: the domain counts as other for now, and is asked again later.
  clock.advance(PROVIDER_TTL_MS + 1000);
  dns.setMode('servfail');
  const failing = new Map((await scores()).items.map((i) => [i.esp, i]));
  t.match(failing.get('fastmail'), { sent: 0 });
  dns.setMode('answer');
  clock.set(new Date('2026-05-06T10:00:00Z'));

  const theirs = new Map((await scores(otherKey)).items.map((i) => [i.esp, i]));
  t.match(theirs.get('yahoo'), { sent: 1, deferred: 1, bounced: 1 });
  t.match(theirs.get('gmail'), { sent: 0 }, 'the other tenant sees only its own mail');
});

t.test('esp-suppressions: active ones and those of the last 7 days, newest first', async (t) => {
  const now = clock.now().getTime();
  const row = async (tenantId: string, provider: string, triggeredAgo: number, expiresIn: number, revokedAgo?: number) => {
    const [r] = await sql<{ id: string }[]>`
      insert into esp_suppressions (tenant_id, provider, reason, refusals, window_minutes, sample_reply, triggered_at, expires_at, revoked_at)
      values (${tenantId}, ${provider}, 'blocked', 10, 15, '550 5.7.1 blocked', ${new Date(now - triggeredAgo)}, ${new Date(now + expiresIn)},
        ${revokedAgo === undefined ? null : new Date(now - revokedAgo)})
      returning id`;
    return r!.id;
  };
  const active = await row(owner.tenantId, 'gmail', HOUR, 3 * HOUR);
  const expiredRecently = await row(owner.tenantId, 'yahoo', 2 * DAY, -2 * DAY + 4 * HOUR);
  const revoked = await row(owner.tenantId, 'outlook', 3 * HOUR, HOUR, 2 * HOUR);
  const longRunning = await row(owner.tenantId, 'aol', 10 * DAY, DAY);
  await row(owner.tenantId, 'icloud', 8 * DAY, -8 * DAY + 4 * HOUR); // expired, older than 7 days: gone
  await row(owner.tenantId, 'proton', 9 * DAY, DAY, 8 * DAY); // revoked long ago: gone
  await row(other.tenantId, 'gmail', HOUR, 3 * HOUR);

  const res = await call(app, 'GET', '/analytics/esp-suppressions', { token: ownerKey });
  t.equal(res.status, 200);
  t.equal(res.body.data.total, 4);
  t.same(
    res.body.data.items.map((i: { id: string }) => i.id),
    [active, revoked, expiredRecently, longRunning],
  );
  t.same(
    res.body.data.items.map((i: { active: boolean }) => i.active),
    [true, false, false, true],
  );
  t.match(res.body.data.items[0], { esp: 'gmail', reason: 'blocked', refusals: 10, window_minutes: 15, sample_reply: '550 5.7.1 blocked', revoked_at: null });
  const theirs = await call(app, 'GET', '/analytics/esp-suppressions', { token: otherKey });
  t.equal(theirs.body.data.total, 1, 'the other tenant sees only its own');
  t.notOk(theirs.body.data.items.some((i: { id: string }) => i.id === active));
});

t.test('trust-score: the reputation formula over all live sends of 30 days; the new-sender baseline without any', async (t) => {
  const empty = await call(app, 'GET', '/analytics/trust-score', { token: otherKey });
  t.same(empty.body.data, {
    score: 50,
    tier: 'caution',
    factors: [
      { name: 'delivery', weight: 0.35, value: 0.5 },
      { name: 'bounce', weight: 0.3, value: 0.5 },
      { name: 'complaint', weight: 0.25, value: 0.5 },
      { name: 'engagement', weight: 0.1, value: 0.5 },
    ],
    basis: 'no_sends',
    updated_at: clock.now().toISOString(),
  });

  const seed = async (domainId: string, status: string, ageMs: number, events: string[] = []) => {
    const id = randomUUID();
    const at = new Date(clock.now().getTime() - ageMs);
    await sql`
      insert into sends (id, tenant_id, domain_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
      values (${id}, ${owner.tenantId}, ${domainId}, 'api', 'live', ${status}, 'a@x.example', 'r@dest.example', 'Hi', ${`${id}@x`}, 'b@x.example', ${at},
              ${at})`;
    for (const type of events) {
      await sql`insert into events (id, tenant_id, type, send_id, recipient, detail, occurred_at)
        values (${randomUUID()}, ${owner.tenantId}, ${type}, ${id}, 'r@dest.example', '{}', ${at})`;
    }
  };
  // Two domains, counted together: 19 delivered (2 opened), 1 bounced; one more bounce older than 30 days.
  const a = await verifiedSendingDomain(sql, ctx.vault, owner.tenantId);
  const b = await verifiedSendingDomain(sql, ctx.vault, owner.tenantId);
  for (let i = 0; i < 10; i++) await seed(a.id, 'delivered', DAY, i < 2 ? ['open'] : []);
  for (let i = 0; i < 9; i++) await seed(b.id, 'delivered', 20 * DAY);
  await seed(b.id, 'bounced', 2 * DAY);
  await seed(b.id, 'bounced', 40 * DAY);

  const res = await call(app, 'GET', '/analytics/trust-score', { token: ownerKey });
  t.equal(res.status, 200);
  // D = (0.95 − 0.8) / 0.2 = 0.75; B = 1 − 0.05 / 0.05 = 0; C = 1; E = 0.1053 (the rate, rounded as /reputation rounds it) / 0.2 = 0.5265 → 100 × (0.2625 +
  // 0 + 0.25 + 0.0526) = 57.
  t.same(res.body.data, {
    score: 57,
    tier: 'caution',
    factors: [
      { name: 'delivery', weight: 0.35, value: 0.75 },
      { name: 'bounce', weight: 0.3, value: 0 },
      { name: 'complaint', weight: 0.25, value: 1 },
      { name: 'engagement', weight: 0.1, value: 0.5265 },
    ],
    basis: 'sends',
    updated_at: clock.now().toISOString(),
  });
});
