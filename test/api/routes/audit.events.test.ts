// GET /audit-events, the dashboard's audit listing: every row of the tenant newest first with its actor named, the filters
// (window, action prefix, actor by id or e-mail, resource), pages by `before`, owner only, audit:export for keys, and
// another tenant's rows never listed.
import t from 'tap';
import { writeAudit } from '../../../shared/operations/audit/log.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { addMember } from '../../helpers/team.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const { app, sql } = await buildTestApp(t, { clock });
const owner = await registerTenant(app);
const other = await registerTenant(app);
const DAY = 86_400_000;

type Item = { id: string; action: string; actor_id: string | null; actor_label: string | null; resource_type: string | null; resource_id: string | null };
const list = async (query: string, token = owner.token) =>
  call<{ data: { items: Item[]; next_before: string | null } }>(app, 'GET', `/audit-events${query}`, { token });
const actions = (items: Item[]) => items.map((i) => i.action);

function audit(tenantId: string, action: string, at: Date, resourceType = 'thing', resourceId = 'r1') {
  return writeAudit(sql, { tenantId, actor: { type: 'system', id: null }, action, resourceType, resourceId, metadata: {}, at });
}

t.test("every action of the tenant, newest first, its actor named; never another tenant's", async (t) => {
  const key = await createKey(app, owner, { name: 'Deploy bot', scopes: ['campaigns:read'] });
  await audit(owner.tenantId, 'domain.created', clock.now(), 'domain', 'd-1');
  await audit(other.tenantId, 'foreign.row', clock.now());
  const res = await list('');
  t.equal(res.status, 200);
  const items = res.body.data.items;
  t.same(actions(items).slice(0, 2), ['domain.created', 'api_key.created'], 'newest first, not only campaign.*');
  const created = items.find((i) => i.action === 'api_key.created')!;
  t.equal(created.actor_id, owner.userId);
  t.equal(created.actor_label, owner.email, "the actor's e-mail");
  t.equal(created.resource_id, key.id);
  t.notOk(actions(items).includes('foreign.row'), "another tenant's rows are not listed");
  t.equal((await list('', other.token)).body.data.items.filter((i) => i.action === 'api_key.created').length, 0, 'nor this one to them');
});

t.test('filters: window, action prefix, actor by id or e-mail, resource type or id', async (t) => {
  const tenant = await registerTenant(app);
  const now = clock.now().getTime();
  await audit(tenant.tenantId, 'old.row', new Date(now - 40 * DAY));
  await audit(tenant.tenantId, 'team.x', new Date(now - 2 * DAY), 'team_invite', 'i-9');
  await createKey(app, tenant, { name: 'k' });
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  t.notOk(actions((await list('', tenant.token)).body.data.items).includes('old.row'), 'the default window is the last 30 days');
  t.same(actions((await list(`?from=${day(now - 41 * DAY)}&to=${day(now - 39 * DAY)}`, tenant.token)).body.data.items), ['old.row'], 'whole UTC days');
  t.same(actions((await list('?action_prefix=api_key.', tenant.token)).body.data.items), ['api_key.created'], 'an action prefix');
  t.same(actions((await list('?action_prefix=api_key.created', tenant.token)).body.data.items), ['api_key.created'], 'or a whole name');
  t.same(actions((await list('?action_prefix=api%25', tenant.token)).body.data.items), [], '% is literal');
  t.same(actions((await list(`?actor=${tenant.userId}`, tenant.token)).body.data.items), ['api_key.created', 'tenant.registered'], 'an actor id');
  t.same(
    actions((await list(`?actor=${tenant.email.toUpperCase()}`, tenant.token)).body.data.items),
    ['api_key.created', 'tenant.registered'],
    "a user's e-mail",
  );
  t.same(actions((await list('?resource=team_invite', tenant.token)).body.data.items), ['team.x'], 'a resource type');
  t.same(actions((await list('?resource=i-9', tenant.token)).body.data.items), ['team.x'], 'or id');
  t.equal((await list('?from=2026-05-04&to=2026-05-01', tenant.token)).status, 422, 'from after to');
  t.equal((await list('?before=abc', tenant.token)).status, 422, 'before is an id');
  // Another tenant's actor e-mail finds nothing here: the e-mail is looked up among this tenant's users.
  t.same((await list(`?actor=${owner.email}`, tenant.token)).body.data.items, []);
});

t.test('pages go back by before', async (t) => {
  const tenant = await registerTenant(app);
  for (let i = 0; i < 5; i++) await audit(tenant.tenantId, `row.${i}`, new Date(clock.now().getTime() - i * 1000));
  const first = await list('?limit=2&action_prefix=row.', tenant.token);
  t.same(actions(first.body.data.items), ['row.4', 'row.3'], 'by id, newest first');
  const second = await list(`?limit=2&action_prefix=row.&before=${first.body.data.next_before}`, tenant.token);
  t.same(actions(second.body.data.items), ['row.2', 'row.1']);
  const last = await list(`?limit=2&action_prefix=row.&before=${second.body.data.next_before}`, tenant.token);
  t.same(actions(last.body.data.items), ['row.0']);
  t.equal(last.body.data.next_before, null, 'null on the last page');
});

t.test('owner only, like the exports; audit:export for keys, and an owner as their maker', async (t) => {
  const admin = await addMember(app, owner, 'admin');
  const viewer = await addMember(app, owner, 'viewer');
  for (const member of [admin, viewer]) {
    const res = await list('', member.token);
    t.equal(res.status, 403, `${member.role}: 403`);
    t.match(res.body, { error: 'forbidden', message: /needs the owner role/ });
  }
  const plain = await createKey(app, owner, { scopes: ['campaigns:read'] });
  t.match((await list('', plain.key)).body, { error: 'invalid_scope' }, 'a key without audit:export');
  const auditor = await createKey(app, owner, { scopes: ['audit:export'] });
  t.equal((await list('', auditor.key)).status, 200, "an owner's audit:export key");
  const adminKey = (await call(app, 'POST', '/api-keys', { token: admin.token, body: { name: 'admin key', scopes: ['audit:export'] } })).body.data.key;
  t.equal((await list('', adminKey)).status, 403, "an admin's key: its ceiling is admin");
});
