// Super-admin tenant deletion and bulk actions: cascade delete over every table with a tenant_id, the super-admin tenant's protections, per-row bulk
// results, one bulk_request_id, the 100-id limit.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { Sql } from '../../../shared/db/connection.js';
import { chainAndVerify } from '../../../shared/operations/audit/appender.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken, type TestApp } from '../../helpers/app.js';
import { CAMPAIGN_ENV, createCampaign, listOf, sender } from '../../helpers/campaigns.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function platformTenantId(sql: Sql): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  return row!.id;
}

/** Every public table with a tenant_id column, from information_schema (so tables added later are checked too). */
async function tenantTables(sql: Sql): Promise<string[]> {
  const rows = await sql<{ table_name: string }[]>`
    select c.table_name from information_schema.columns c
    join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name and t.table_type = 'BASE TABLE'
    where c.table_schema = 'public' and c.column_name = 'tenant_id' order by 1`;
  return rows.map((r) => r.table_name);
}

async function rowsPerTable(sql: Sql, tables: string[], tenantId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const table of tables) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)} where tenant_id = ${tenantId}`;
    counts.set(table, row!.n);
  }
  return counts;
}

/** A tenant with data in as many tables as the API and a few inserts reach. */
async function populatedTenant(s: TestApp) {
  const snd = await sender(s);
  const token = snd.tenant.token;
  const key = await createKey(s.app, snd.tenant);
  const { listId } = await listOf(s.sql, snd.tenant.tenantId, ['a@example.test', 'b@example.test']);
  await createCampaign(s, token, { list_id: listId, from_email: snd.from });
  t.equal(
    (await call(s.app, 'POST', '/templates', { token, body: { name: 'Welcome', subject: 'Hi', body_text: 'Hello' } })).status < 300,
    true,
    'template stored',
  );
  t.equal((await call(s.app, 'POST', '/suppressions', { token, body: { email: 'gone@example.test' } })).status < 300, true, 'suppression stored');
  const sent = await call(s.app, 'POST', '/transactional/send', {
    token: key.key,
    body: { from_email: snd.from, to: 'reader@example.test', subject: 'Receipt', body_text: 'Thanks' },
    headers: { 'idempotency-key': `k-${randomUUID()}` },
  });
  t.ok(sent.status < 300, `transactional send accepted (${sent.status})`);
  // Inbound mail addressed to the tenant: its message row has no tenant column, only its recipient row does.
  const inboundId = randomUUID();
  await s.sql`
    insert into inbound_messages (id, received_at, remote_address, tls, mail_from, size_bytes, raw)
    values (${inboundId}, now(), '192.0.2.10', false, 'x@sender.example', 3, ${Buffer.from('abc')})`;
  await s.sql`
    insert into inbound_recipients (id, message_id, recipient, kind, tenant_id, created_at)
    values (${randomUUID()}, ${inboundId}, ${`in@${snd.domain.name}`}, 'tenant', ${snd.tenant.tenantId}, now())`;
  return { ...snd, key, inboundId };
}

t.test('DELETE /admin/tenants/{id} removes every row of the tenant in every table', async (t) => {
  const s = await buildTestApp(t, { env: CAMPAIGN_ENV });
  const admin = await superAdminToken(s.app);
  const victim = await populatedTenant(s);
  const bystander = await populatedTenant(s);
  const tables = await tenantTables(s.sql);
  t.ok(tables.length >= 25, `${tables.length} tables carry a tenant_id`);

  const before = await rowsPerTable(s.sql, tables, victim.tenant.tenantId);
  const populated = [...before].filter(([, n]) => n > 0).map(([table]) => table);
  t.ok(populated.length >= 15, `the tenant has rows in ${populated.length} tables: ${populated.join(', ')}`);
  const bystanderBefore = await rowsPerTable(s.sql, tables, bystander.tenant.tenantId);

  const res = await call(s.app, 'DELETE', `/admin/tenants/${victim.tenant.tenantId}`, { token: admin });
  t.equal(res.status, 200);
  t.same(res.body.data, { deleted: true, id: victim.tenant.tenantId });

  const after = await rowsPerTable(s.sql, tables, victim.tenant.tenantId);
  for (const table of tables) {
    if (table === 'audit_events') continue;
    t.equal(after.get(table), 0, `no row left in ${table}`);
  }
  // The audit log is the one exception: an append-only hash chain keeps the record, and gains the deletion.
  const [deletion] = await s.sql`select actor_type, metadata from audit_events where tenant_id = ${victim.tenant.tenantId} and action = 'tenant.deleted'`;
  t.match(deletion, { actor_type: 'user', metadata: { slug: victim.tenant.slug } });
  t.equal((await chainAndVerify(s.sql)).intact, true, 'the audit chain is intact');
  // Rows without a tenant column: the tenant's users' children and its inbound message.
  t.equal((await s.sql`select 1 from users where id = ${victim.tenant.userId}`).length, 0, 'its user is gone');
  t.equal((await s.sql`select 1 from api_key_activity a join api_keys k on k.id = a.key_id where k.id = ${victim.key.id}`).length, 0);
  t.equal((await s.sql`select 1 from inbound_messages where id = ${victim.inboundId}`).length, 0, 'its inbound message is gone');
  t.equal((await s.sql`select 1 from inbound_messages where id = ${bystander.inboundId}`).length, 1, "the other tenant's inbound message stays");
  t.same(await rowsPerTable(s.sql, tables, bystander.tenant.tenantId), bystanderBefore, "the other tenant's rows are untouched");

  const login = await call(s.app, 'POST', '/auth/login', { body: { email: victim.tenant.email, password: victim.tenant.password } });
  t.equal(login.status, 401, 'its owner can no longer sign in');
  t.equal((await call(s.app, 'GET', '/whoami', { token: victim.key.key })).status, 401, 'its key no longer works');

  const again = await call(s.app, 'DELETE', `/admin/tenants/${victim.tenant.tenantId}`, { token: admin });
  t.equal(again.status, 404, 'deleting it again → 404');
  t.equal(again.body.error, 'not_found');
  t.equal((await call(s.app, 'DELETE', '/admin/tenants/not-a-uuid', { token: admin })).status, 404);
});

t.test("the super-admin's own tenant cannot be deleted or suspended", async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const platform = await platformTenantId(sql);
  const del = await call(app, 'DELETE', `/admin/tenants/${platform}`, { token: admin });
  t.equal(del.status, 403);
  t.equal(del.body.error, 'forbidden');
  t.match(del.body.message, 'cannot delete super-admin tenant');
  const susp = await call(app, 'POST', `/admin/tenants/${platform}/suspend`, { token: admin });
  t.equal(susp.status, 403);
  t.equal(susp.body.error, 'forbidden');
  const imp = await call(app, 'POST', `/admin/tenants/${platform}/impersonate`, { token: admin, body: {} });
  t.equal(imp.status, 403);
  const [row] = await sql`select status from tenants where id = ${platform}`;
  t.equal(row!.status, 'active');
  t.equal((await call(app, 'GET', '/whoami', { token: admin })).status, 200, 'the super-admin still works');
});

t.test('bulk actions: per-row results, one bulk_request_id, limits and aliases', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const platform = await platformTenantId(sql);
  const a = await registerTenant(app);
  const b = await registerTenant(app);

  const res = await call(app, 'POST', '/admin/tenants/bulk-action', {
    token: admin,
    body: { tenant_ids: [a.tenantId, b.tenantId, UNKNOWN, platform, a.tenantId, 'junk'], action: 'suspend' },
  });
  t.equal(res.status, 200, 'row failures keep the answer 200');
  const data = res.body.data;
  t.equal(data.action, 'suspend');
  t.same(data.results, [
    { tenant_id: a.tenantId, status: 'suspended' },
    { tenant_id: b.tenantId, status: 'suspended' },
    { tenant_id: UNKNOWN, status: 'error', reason: 'tenant not found' },
    { tenant_id: platform, status: 'error', reason: 'cannot suspend super-admin tenant' },
    { tenant_id: 'junk', status: 'error', reason: 'tenant not found' },
  ]);
  t.equal(data.succeeded, 2);
  t.equal(data.failed, 3);
  const audit = await sql<{ tenant_id: string; metadata: { bulk_request_id?: string } }[]>`
    select tenant_id, metadata from audit_events where action = 'tenant.suspended' order by id`;
  t.equal(audit.length, 2, 'one audit row per change');
  for (const row of audit) t.equal(row.metadata.bulk_request_id, data.bulk_request_id, 'each carries the bulk_request_id');

  const again = await call(app, 'POST', '/admin/tenants/bulk/suspend', { token: admin, body: { tenant_ids: [a.tenantId] } });
  t.same(again.body.data.results, [{ tenant_id: a.tenantId, status: 'already_suspended' }], 'the alias; nothing to change');
  t.equal((await sql`select 1 from audit_events where action = 'tenant.suspended'`).length, 2, 'no audit row without a change');

  const un = await call(app, 'POST', '/admin/tenants/bulk/unsuspend', { token: admin, body: { tenant_ids: [a.tenantId, b.tenantId] } });
  t.equal(un.status, 200);
  t.same(
    un.body.data.results.map((r: { status: string }) => r.status),
    ['active', 'active'],
  );
  t.not(un.body.data.bulk_request_id, data.bulk_request_id, 'a new request, a new id');
  const unAudit = await sql<{ metadata: { bulk_request_id: string } }[]>`select metadata from audit_events where action = 'tenant.unsuspended'`;
  t.same(
    unAudit.map((r) => r.metadata.bulk_request_id),
    [un.body.data.bulk_request_id, un.body.data.bulk_request_id],
  );

  const del = await call(app, 'POST', '/admin/tenants/bulk/delete', { token: admin, body: { tenant_ids: [b.tenantId, platform] } });
  t.equal(del.status, 200);
  t.same(del.body.data.results, [
    { tenant_id: b.tenantId, status: 'deleted' },
    { tenant_id: platform, status: 'error', reason: 'cannot delete super-admin tenant' },
  ]);
  const [delAudit] = await sql<{ metadata: { bulk_request_id: string } }[]>`select metadata from audit_events where action = 'tenant.deleted'`;
  t.equal(delAudit!.metadata.bulk_request_id, del.body.data.bulk_request_id);
  t.equal((await sql`select 1 from tenants where id = ${platform}`).length, 1, 'the platform tenant stays');

  const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
  for (const [url, extra] of [
    ['/admin/tenants/bulk-action', { action: 'suspend' }],
    ['/admin/tenants/bulk/suspend', {}],
    ['/admin/tenants/bulk/unsuspend', {}],
    ['/admin/tenants/bulk/delete', {}],
  ] as const) {
    const over = await call(app, 'POST', url, { token: admin, body: { tenant_ids: ids(101), ...extra } });
    t.equal(over.status, 422, `${url} with 101 ids → 422`);
    t.equal(over.body.error, 'validation_error');
    t.match(over.body.message, /^tenant_ids/);
    t.equal((await call(app, 'POST', url, { token: admin, body: { tenant_ids: [], ...extra } })).status, 422, 'no ids → 422');
  }
  const hundred = await call(app, 'POST', '/admin/tenants/bulk/suspend', { token: admin, body: { tenant_ids: ids(100) } });
  t.equal(hundred.status, 200, '100 ids → 200');
  t.equal(hundred.body.data.failed, 100, 'unknown ids are row errors');
  const badAction = await call(app, 'POST', '/admin/tenants/bulk-action', { token: admin, body: { tenant_ids: [a.tenantId], action: 'delete' } });
  t.equal(badAction.status, 422, 'bulk-action takes suspend or unsuspend only');
  t.equal((await call(app, 'POST', '/admin/tenants/bulk-action', { token: admin, body: { tenant_ids: [a.tenantId] } })).status, 422, 'action is required');
});
