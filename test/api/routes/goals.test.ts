// Goals and goal conversions end to end: CRUD and its refusals, real clicks through /c converting (exact, prefix, regex, revenue from the URL), scanner
// clicks left out (also when flagged later), a deleted goal's conversions, scopes and tenant isolation.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { campaignSend, HUMAN_UA, markDelivered, plainSend } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const s = await buildTestApp(t, { clock });
const { app, ctx, sql } = s;
const owner = await registerTenant(app);
const other = await registerTenant(app);

const BODY = `<html><body>
<a href="https://shop.example/thanks?order=7&amp;value=49.99">Buy</a>
<a href="https://shop.example/checkout/step2">Checkout</a>
<a href="https://blog.example/post">Blog</a>
</body></html>`;
const THANKS = 0;
const CHECKOUT = 1;
const BLOG = 2;

const hit = (path: string, ua = HUMAN_UA) => {
  clock.advance(1000);
  return app.inject({ method: 'GET', url: path, headers: { 'user-agent': ua }, remoteAddress: '203.0.113.77' });
};
/** A click a person makes: a minute after the previous one (never "every link at once"). */
const click = async (path: string, ua?: string) => {
  clock.advance(60_000);
  const res = await hit(path, ua);
  if (res.statusCode !== 302) throw new Error(`click answered ${res.statusCode}`);
};
const recipient = async (tenantId: string, campaignId?: string) => {
  const f = await campaignSend(ctx, { tenantId, body: BODY, ...(campaignId ? { campaignId } : {}) });
  await markDelivered(sql, f.sendId, new Date(clock.now().getTime() - 3_600_000));
  return f;
};
const createGoal = async (body: Record<string, unknown>, token = owner.token) => {
  const res = await call(app, 'POST', '/goals', { token, body });
  if (res.status !== 201) throw new Error(`goal: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; name: string };
};

t.test('CRUD: create, read, list, change, delete; duplicates 409, regexes RE2 cannot run and bad fields 422', async (t) => {
  const created = await call(app, 'POST', '/goals', {
    token: owner.token,
    body: { name: ' Signup ', match_type: 'prefix', match_value: 'https://app.example/welcome', revenue_cents: 0 },
  });
  t.equal(created.status, 201);
  t.match(created.body.data, { name: 'Signup', match_type: 'prefix', match_value: 'https://app.example/welcome', revenue_cents: 0, revenue_param: null });
  const id = created.body.data.id as string;
  t.match((await call(app, 'GET', `/goals/${id}`, { token: owner.token })).body.data, { id, name: 'Signup' });
  const list = await call(app, 'GET', '/goals', { token: owner.token });
  t.equal(list.body.total, 1);
  t.equal(list.body.data[0].id, id);

  const dup = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'SIGNUP', match_type: 'exact', match_value: 'https://x.example/' } });
  t.equal(dup.status, 409);
  t.equal(dup.body.error, 'conflict');

  const unsafe = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'Bad', match_type: 'regex', match_value: '(a+)\\1$' } });
  t.equal(unsafe.status, 422);
  t.equal(unsafe.body.error, 'validation_error');
  t.match(unsafe.body.message, /match_value/);
  const broken = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'Bad', match_type: 'regex', match_value: '([a-z' } });
  t.equal(broken.status, 422);
  const badType = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'Bad', match_type: 'glob', match_value: 'x' } });
  t.equal(badType.status, 422);
  const negative = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'Bad', match_type: 'exact', match_value: 'x', revenue_cents: -1 } });
  t.equal(negative.status, 422);
  const extra = await call(app, 'POST', '/goals', { token: owner.token, body: { name: 'Bad', match_type: 'exact', match_value: 'x', colour: 'red' } });
  t.equal(extra.status, 400, 'an unexpected field');

  const changed = await call(app, 'PATCH', `/goals/${id}`, {
    token: owner.token,
    body: { match_type: 'regex', match_value: '^https://app\\.example/welcome', revenue_param: 'value' },
  });
  t.equal(changed.status, 200);
  t.match(changed.body.data, { name: 'Signup', match_type: 'regex', revenue_cents: 0, revenue_param: 'value' });
  const unsafePatch = await call(app, 'PATCH', `/goals/${id}`, { token: owner.token, body: { match_value: '(?=x)xy' } });
  t.equal(unsafePatch.status, 422, 'the kept match_type (regex) judges the new value');
  const cleared = await call(app, 'PATCH', `/goals/${id}`, { token: owner.token, body: { revenue_cents: null } });
  t.equal(cleared.body.data.revenue_cents, null);

  const deleted = await call(app, 'DELETE', `/goals/${id}`, { token: owner.token });
  t.same(deleted.body.data, { deleted: true, id });
  t.equal((await call(app, 'GET', `/goals/${id}`, { token: owner.token })).status, 404);
  t.equal((await call(app, 'DELETE', `/goals/${id}`, { token: owner.token })).status, 404);
  t.equal((await call(app, 'GET', '/goals/not-a-uuid', { token: owner.token })).status, 404);
  const [audit] = await sql`select count(*)::int as n from audit_events where tenant_id = ${owner.tenantId} and action like 'goal.%'`;
  t.equal(audit!['n'], 4, 'created, updated twice (the refused change wrote nothing), deleted');
});

t.test('conversions from real clicks: per goal, unique converters, revenue from the URL, scanners and other tenants left out, deleted goals', async (t) => {
  const purchase = await createGoal({
    name: 'Purchase',
    match_type: 'regex',
    match_value: '^https://shop\\.example/thanks\\?',
    revenue_cents: 100,
    revenue_param: 'value',
  });
  const checkout = await createGoal({ name: 'Checkout', match_type: 'prefix', match_value: 'https://shop.example/checkout', revenue_cents: 250 });
  const blog = await createGoal({ name: 'Blog', match_type: 'exact', match_value: 'https://blog.example/post' });
  // Another tenant's goal on the same URLs converts nothing of the owner's.
  await createGoal({ name: 'Foreign', match_type: 'prefix', match_value: 'https://', revenue_cents: 999 }, other.token);

  const a = await recipient(owner.tenantId);
  const campaignId = a.campaignId!;
  const b = await recipient(owner.tenantId, campaignId);
  const scanned = await recipient(owner.tenantId, campaignId);
  const burst = await recipient(owner.tenantId, campaignId);
  await click(a.clicks[THANKS]!);
  await click(a.clicks[CHECKOUT]!);
  await click(a.clicks[BLOG]!);
  await click(b.clicks[THANKS]!);
  await click(b.clicks[THANKS]!);
  await click(b.clicks[CHECKOUT]!);
  await click(scanned.clicks[CHECKOUT]!, 'Mozilla/5.0 (compatible; Barracuda)');
  // Every link within seconds: the first click looks human when recorded, the burst flags it afterwards.
  clock.advance(60_000);
  for (const path of burst.clicks) await hit(path);
  // A transactional send's click converts, but belongs to no campaign.
  const receipt = await plainSend(ctx, { tenantId: owner.tenantId });
  await markDelivered(sql, receipt.sendId, new Date(clock.now().getTime() - 3_600_000));
  await click(receipt.clicks[0]!);

  const stored = await sql`select count(*)::int as n from goal_conversions where tenant_id = ${owner.tenantId} and campaign_id = ${campaignId}`;
  t.equal(stored[0]!['n'], 6 + 1 + 3, 'scanner clicks are stored too (the flag may come later)');
  t.equal((await sql`select count(*)::int as n from goal_conversions where tenant_id = ${other.tenantId}`)[0]!['n'], 0);

  // Renamed after the clicks: reported under its current name. Deleted after the clicks: under null.
  await call(app, 'PATCH', `/goals/${checkout.id}`, { token: owner.token, body: { name: 'Checkout started' } });
  t.equal((await call(app, 'DELETE', `/goals/${blog.id}`, { token: owner.token })).status, 200);
  await click(a.clicks[BLOG]!);

  const res = await call(app, 'GET', `/campaigns/${campaignId}/goal-conversions`, { token: owner.token });
  t.equal(res.status, 200);
  t.same(res.body.data, {
    campaign_id: campaignId,
    total_conversions: 6,
    unique_converters: 2,
    revenue_cents: 4999 * 3 + 250 * 2,
    by_goal: [
      { goal_id: purchase.id, goal_name: 'Purchase', conversions: 3, unique_converters: 2, revenue_cents: 4999 * 3 },
      { goal_id: checkout.id, goal_name: 'Checkout started', conversions: 2, unique_converters: 2, revenue_cents: 500 },
      { goal_id: null, goal_name: '(deleted goal)', conversions: 1, unique_converters: 1, revenue_cents: 0 },
    ],
  });

  const empty = await recipient(owner.tenantId);
  t.same((await call(app, 'GET', `/campaigns/${empty.campaignId}/goal-conversions`, { token: owner.token })).body.data, {
    campaign_id: empty.campaignId,
    total_conversions: 0,
    unique_converters: 0,
    revenue_cents: 0,
    by_goal: [],
  });
  t.equal((await call(app, 'GET', `/campaigns/${crypto.randomUUID()}/goal-conversions`, { token: owner.token })).status, 404);
});

t.test('scopes: campaigns:read reads goals and conversions, campaigns:write changes goals', async (t) => {
  const reader = await createKey(app, owner, { scopes: ['campaigns:read'] });
  const writer = await createKey(app, owner, { scopes: ['campaigns:write'] });
  const none = await createKey(app, owner, { scopes: ['contacts:read'] });
  const f = await recipient(owner.tenantId);
  t.equal((await call(app, 'GET', '/goals', { token: reader.key })).status, 200);
  t.equal((await call(app, 'GET', `/campaigns/${f.campaignId}/goal-conversions`, { token: reader.key })).status, 200);
  const refused = await call(app, 'POST', '/goals', { token: reader.key, body: { name: 'K', match_type: 'exact', match_value: 'x' } });
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'invalid_scope');
  const made = await call(app, 'POST', '/goals', { token: writer.key, body: { name: 'K', match_type: 'exact', match_value: 'x' } });
  t.equal(made.status, 201);
  for (const url of ['/goals', `/goals/${made.body.data.id}`, `/campaigns/${f.campaignId}/goal-conversions`]) {
    const res = await call(app, 'GET', url, { token: none.key });
    t.equal(res.status, 403, url);
    t.equal(res.body.error, 'invalid_scope', url);
  }
});

t.test("isolation: another tenant's goals and campaign conversions are 404", async (t) => {
  const goal = await createGoal({ name: 'Mine', match_type: 'exact', match_value: 'https://mine.example/' });
  const f = await recipient(owner.tenantId);
  const otherKey = await createKey(app, other);
  for (const credential of [other.token, otherKey.key]) {
    await assertForeign404(t, app, credential, [
      { method: 'GET', url: `/goals/${goal.id}` },
      { method: 'PATCH', url: `/goals/${goal.id}`, body: { name: 'Theirs' } },
      { method: 'DELETE', url: `/goals/${goal.id}` },
      { method: 'GET', url: `/campaigns/${f.campaignId}/goal-conversions` },
    ]);
  }
  t.equal(
    (await call(app, 'GET', '/goals', { token: other.token })).body.data.some((g: { id: string }) => g.id === goal.id),
    false,
  );
  t.equal((await call(app, 'GET', `/goals/${goal.id}`, { token: owner.token })).body.data.name, 'Mine', 'unchanged');
});
