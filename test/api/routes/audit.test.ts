// The tenant's audit: the campaign feed, the CSV export (window, CSV-injection escaping, many cursor pages, scope) and the PDF export (pdftotext finds the
// digest recomputed from the CSV on every page, Unicode text, the 10,000-row cap, owner only, audit:export for keys), tenant isolation.
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { chainPending } from '../../../shared/operations/audit/appender.js';
import { writeAudit } from '../../../shared/operations/audit/log.js';
import { CURSOR_ROWS } from '../../../shared/operations/audit/queries.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { addMember } from '../../helpers/team.js';

const run = promisify(execFile);
const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const s = await buildTestApp(t, { clock });
const { app, sql } = s;
const owner = await registerTenant(app);
const other = await registerTenant(app);
const HEADER = 'id,time,action,actor_type,actor_id,resource_type,resource_id,ip,metadata,hash';
const DAY = 86_400_000;

const get = (url: string, token = owner.token) => app.inject({ method: 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${token}` } });
const rowsOf = (text: string) => parse(text, { columns: true }) as Record<string, string>[];
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
/** The CSV's data lines (header dropped), as `tail -n +2 | sha256sum` sees them. */
const csvDigest = (csv: string) => sha256(csv.slice(csv.indexOf('\r\n') + 2));

function audit(tenantId: string, action: string, at: Date, metadata: Record<string, unknown> = {}, resourceId = 'r1') {
  return writeAudit(sql, { tenantId, actor: { type: 'system', id: null }, action, resourceType: 'thing', resourceId, metadata, at });
}

/** `n` audit rows of the tenant in one statement (unchained, as writers leave them), one millisecond apart from `from`. */
async function bulkRows(tenantId: string, n: number, from: Date, action = 'bulk.row') {
  await sql`
    insert into audit_events (tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip, created_at)
    select ${tenantId}, 'system', null, ${action}, 'thing', g::text, jsonb_build_object('i', g), null, ${from}::timestamptz + g * interval '1 millisecond'
    from generate_series(1, ${n}) g`;
}

async function pdfText(pdf: Buffer): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'audit-pdf-'));
  try {
    await writeFile(join(dir, 'a.pdf'), pdf);
    const { stdout } = await run('pdftotext', ['-enc', 'UTF-8', join(dir, 'a.pdf'), '-'], { maxBuffer: 64 * 1024 * 1024 });
    // pdftotext ends each page with a form feed.
    return stdout.split('\f').filter((p) => p.trim() !== '');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

t.test('GET /audit: the campaign audit rows, newest first, limit and offset echoed', async (t) => {
  const c = await call(app, 'POST', '/campaigns', {
    token: owner.token,
    body: { name: 'Spring', subject: 'Hi', from_email: 'a@b.example', body_html: '<p>x</p>' },
  });
  await audit(owner.tenantId, 'campaign.updated', new Date(clock.now().getTime() + 1000), {}, c.body.data?.id ?? 'c1');
  await audit(owner.tenantId, 'domain.created', clock.now());
  await audit(other.tenantId, 'campaign.created', clock.now());
  const res = await call(app, 'GET', '/audit?limit=10', { token: owner.token });
  t.equal(res.status, 200);
  t.match(res.body.data, { limit: 10, offset: 0 });
  const actions = res.body.data.data.map((r: { action: string }) => r.action);
  t.ok(actions.length >= 1 && actions.every((a: string) => a.startsWith('campaign.')), 'campaign rows only');
  t.equal(actions[0], 'campaign.updated', 'newest first');
  t.notOk(
    res.body.data.data.some((r: { actor_id: string; action: string }) => r.action === 'campaign.created' && r.actor_id === null),
    "not another tenant's",
  );
  const paged = await call(app, 'GET', '/audit?limit=1&offset=1', { token: owner.token });
  t.match(paged.body.data, { limit: 1, offset: 1 });
  t.ok(paged.body.data.data.length <= 1);
});

t.test('CSV: window by dates (default 30 days), escaping, oldest first, many cursor pages, tenant scoped', async (t) => {
  const tenant = await registerTenant(app);
  const now = clock.now().getTime();
  await audit(tenant.tenantId, 'old.row', new Date(now - 40 * DAY));
  await audit(tenant.tenantId, 'inject.row', new Date(now - 2 * DAY), { note: '=HYPERLINK("http://evil")', who: 'Zoë 東京' }, '+1-555');
  await bulkRows(tenant.tenantId, CURSOR_ROWS * 2 + 5, new Date(now - DAY));
  await audit(other.tenantId, 'foreign.row', new Date(now - DAY));
  await chainPending(sql);

  const res = await get('/audit-events.csv', tenant.token);
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/csv/);
  t.match(res.headers['content-disposition'], /audit-events-.*\.csv/);
  t.equal(res.body.split('\r\n')[0], HEADER);
  const rows = rowsOf(res.body);
  const actions = rows.map((r) => r['action']);
  t.notOk(actions.includes('old.row'), 'the default window is the last 30 days');
  t.notOk(actions.includes('foreign.row'), "another tenant's rows never appear");
  t.equal(rows.filter((r) => r['action'] === 'bulk.row').length, CURSOR_ROWS * 2 + 5, 'every row across cursor pages');
  t.same(
    rows.map((r) => r['time']),
    [...rows.map((r) => r['time'])].sort(),
    'oldest first',
  );
  const injected = rows.find((r) => r['action'] === 'inject.row')!;
  t.equal(injected['resource_id'], "'+1-555", 'a leading + is neutralized');
  t.equal(injected['metadata'], '{"note":"=HYPERLINK(\\"http://evil\\")","who":"Zoë 東京"}', 'metadata as canonical JSON, Unicode kept');
  t.match(injected['hash'], /^[0-9a-f]{64}$/, 'the chain hash of the row');

  const old = rowsOf(
    (
      await get(
        `/audit-events.csv?from=${new Date(now - 41 * DAY).toISOString().slice(0, 10)}&to=${new Date(now - 39 * DAY).toISOString().slice(0, 10)}`,
        tenant.token,
      )
    ).body,
  );
  t.same(
    old.map((r) => r['action']),
    ['old.row'],
    'from and to select whole UTC days',
  );
  t.equal((await get('/audit-events.csv?from=2026-05-04&to=2026-05-01', tenant.token)).statusCode, 422, 'from after to');
  t.equal((await get('/audit-events.csv?from=2026-13-01', tenant.token)).statusCode, 422, 'not a date');
  for (const bad of ['from=2026-02-30', 'to=2026-04-31', 'from=2026-00-10']) {
    t.equal((await get(`/audit-events.csv?${bad}`, tenant.token)).statusCode, 422, `${bad}: not a calendar day (was rolled over into the next month)`);
  }
});

t.test('CSV and PDF need audit:export with an API key', async (t) => {
  const plain = await createKey(app, owner, { scopes: ['campaigns:read'] });
  const scoped = await createKey(app, owner, { scopes: ['audit:export'] });
  t.equal((await get('/audit-events.csv', plain.key)).statusCode, 403);
  t.equal((await get('/audit-events/export.pdf', plain.key)).statusCode, 403);
  t.equal((await get('/audit-events.csv', scoped.key)).statusCode, 200);
  t.equal((await get('/audit-events/export.pdf', scoped.key)).statusCode, 200);
});

t.test('PDF and CSV: owner only', async (t) => {
  for (const role of ['admin', 'developer', 'viewer'] as const) {
    const member = await addMember(app, owner, role);
    for (const url of ['/audit-events/export.pdf', '/audit-events.csv']) {
      const res = await get(url, member.token);
      t.equal(res.statusCode, 403, `${role} is refused ${url}`);
      t.equal(res.json().error, 'forbidden');
    }
  }
});

t.test("PDF and CSV: a key carries its maker's role; a developer or admin minting audit:export does not reach them", async (t) => {
  for (const role of ['admin', 'developer'] as const) {
    const member = await addMember(app, owner, role);
    const minted = await call(app, 'POST', '/api-keys', { token: member.token, body: { name: 'side door', scopes: ['audit:export'] } });
    t.equal(minted.status, 201, `a ${role} may still make keys`);
    for (const url of ['/audit-events/export.pdf', '/audit-events.csv']) {
      const res = await get(url, minted.body.data.key);
      t.equal(res.statusCode, 403, `${role}'s key is refused ${url}`);
      t.equal(res.json().error, 'forbidden');
      t.match(res.json().message, `needs the owner role or higher; this API key's ceiling is ${role}`);
    }
  }
  const [row] = await sql<
    { role_ceiling: string }[]
  >`select role_ceiling from api_keys where tenant_id = ${owner.tenantId} and name = 'side door' order by created_at limit 1`;
  t.equal(row!.role_ceiling, 'admin', 'the ceiling is stored with the key');
  const ownersKey = await createKey(app, owner, { scopes: ['audit:export'] });
  t.equal((await get('/audit-events.csv', ownersKey.key)).statusCode, 200, "an owner's key does");
});

t.test('GET /audit needs audit:export with an API key: actor ids and caller addresses are audit data', async (t) => {
  const send = await createKey(app, owner, { scopes: ['transactional:send'] });
  const res = await get('/audit', send.key);
  t.equal(res.statusCode, 403, 'a transactional:send key is refused');
  t.equal(res.json().error, 'invalid_scope');
  t.match(res.json().message, 'lacks the audit:export scope');
  const auditor = await createKey(app, owner, { scopes: ['audit:export'] });
  t.equal((await get('/audit', auditor.key)).statusCode, 200);
  const docs = (await call(app, 'GET', '/openapi.json')).body;
  t.match(docs.paths['/audit'].get.description, 'Required scope for API keys: `audit:export`');
  t.match(docs.paths['/audit-events.csv'].get.description, 'Users need the `owner` role or higher');
});

t.test('PDF: every page footer carries the digest the CSV recomputes; Unicode text is extractable', async (t) => {
  const tenant = await registerTenant(app);
  const from = new Date(clock.now().getTime() - 3 * DAY);
  await audit(tenant.tenantId, 'unicode.row', from, { who: 'Zoë Ångström 東京 Ελλάδα' }, '=cmd');
  await bulkRows(tenant.tenantId, 400, new Date(from.getTime() + 1000));
  await chainPending(sql);
  const day = (d: Date) => d.toISOString().slice(0, 10);
  const since = `${day(from)}T00:00:00Z`;
  const until = `${day(new Date(clock.now().getTime() + DAY))}T00:00:00Z`;

  const res = await get(`/audit-events/export.pdf?since=${since}&until=${until}`, tenant.token);
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'application/pdf');
  t.equal(res.rawPayload.subarray(0, 5).toString(), '%PDF-');
  const pages = await pdfText(res.rawPayload);
  t.ok(pages.length > 1, `several pages (${pages.length})`);

  // The same rows through the CSV: its data lines hashed are the digest (docs/audit.md's sha256sum one-liner).
  const csv = (await get(`/audit-events.csv?from=${day(from)}&to=${day(new Date(clock.now().getTime() + DAY))}`, tenant.token)).body;
  t.equal(rowsOf(csv).length, 402, 'the rows and the tenant.registered row');
  const digest = csvDigest(csv);
  pages.forEach((page, i) => t.match(page, `Page ${i + 1} of ${pages.length} sha256 ${digest}`, `page ${i + 1} footer carries the digest`));
  const text = pages.join('\n');
  t.match(text.replace(/\s+/g, ' '), 'Zoë Ångström 東京 Ελλάδα', 'Unicode renders (embedded fonts, CJK included)');
  t.match(text, "'=cmd", 'cells are escaped as in the CSV');

  const filtered = await get(`/audit-events/export.pdf?since=${since}&until=${until}&action_prefix=unicode.`, tenant.token);
  const [only] = await pdfText(filtered.rawPayload);
  const unicodeRow = rowsOf(csv).find((r) => r['action'] === 'unicode.row')!;
  const line = csv.split('\r\n').find((l) => l.startsWith(`${unicodeRow['id']},`))!;
  t.match(only, `sha256 ${sha256(`${line}\r\n`)}`, 'a filtered export digests only its rows');
});

t.test('PDF: at most 10,000 rows; more is 400 {error, limit, row_count}; limit lowers the cap', async (t) => {
  const tenant = await registerTenant(app);
  const from = new Date(clock.now().getTime() - 5 * DAY);
  await bulkRows(tenant.tenantId, 10_000, from);
  const window = `since=${from.toISOString()}&until=${new Date(from.getTime() + DAY).toISOString()}`;
  const full = await get(`/audit-events/export.pdf?${window}`, tenant.token);
  t.equal(full.statusCode, 200, 'exactly 10,000 rows export');
  await bulkRows(tenant.tenantId, 1, new Date(from.getTime() + 20_000), 'bulk.extra');
  const over = await get(`/audit-events/export.pdf?${window}`, tenant.token);
  t.equal(over.statusCode, 400);
  t.match(over.json(), { ok: false, error: 'bad_request', limit: 10_000, row_count: 10_001 });
  const small = await get(`/audit-events/export.pdf?${window}&limit=100&action=bulk.extra`, tenant.token);
  t.equal(small.statusCode, 200, 'a selection within limit');
  const capped = await get(`/audit-events/export.pdf?${window}&limit=100`, tenant.token);
  t.match(capped.json(), { error: 'bad_request', limit: 100, row_count: 10_001 });
  t.equal((await get(`/audit-events/export.pdf?limit=10001`, tenant.token)).statusCode, 422, 'limit above 10,000');
});
