// Benchmark: audiences at 1,000,000 contacts. A bulk contact import of a generated CSV file (BENCH_IMPORT_ROWS rows,
// default 1,000,000, with 5 custom fields) beside PostgreSQL's raw COPY of the same file into a bare table (the peer) and
// a set-based insert of it into a table built like contacts (the ceiling of any loader of that table); then segment
// counts over the imported contacts for three typical definitions, and a list's member count at 1,000,000 members.
//
// Goals: the import's rows/s at least 50 % of raw COPY's, and the importing process's peak RSS under 300 MB (the file
// is streamed: memory must not grow with it); segment count p95 < 300 ms; member count < 50 ms. The import runs in a child process of its own (its RSS is
// the job's
// alone; compiled to JavaScript, as `mailpath start` runs), from a file stored as an API upload stores it; the upload
// (chunks into PostgreSQL) is timed separately. BENCH_IMPORT_BATCH overrides imports.batch_size.
// PostgreSQL runs on the same 2 cores as the importing process. Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL
// overrides); creates and drops a database of its own.
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { systemClock } from '../shared/kernel/clock.js';
import { loadConfig } from '../shared/config/index.js';
import { insertCustomField } from '../shared/audiences/custom-fields/queries.js';
import { connect } from '../shared/db/connection.js';
import { TenantQueries } from '../shared/db/deadline.js';
import { migrate } from '../shared/db/migrate.js';
import { startImport } from '../shared/audiences/imports/service.js';
import { startBoss } from '../shared/jobs/boss.js';
import { createLogger } from '../shared/kernel/log.js';
import { insertTenant } from '../shared/accounts/tenants/queries.js';
import { previewCount } from '../shared/audiences/segments/service.js';
import { getList } from '../shared/audiences/lists/service.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const ROWS = Number(process.env['BENCH_IMPORT_ROWS'] ?? 1_000_000);
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** Writes the CSV: email, first and last name, and 5 custom fields (select, number, date, boolean, text). */
async function writeFile(path: string): Promise<void> {
  const file = createWriteStream(path);
  const plans = ['free', 'pro', 'team'];
  const countries = ['FR', 'DE', 'US', 'GB', 'ES', 'IT', 'NL', 'BR', 'IN', 'JP'];
  file.write('email,first_name,last_name,country,plan,seats,signup_date,vip,source\n');
  for (let i = 0; i < ROWS; i++) {
    const day = String((i % 28) + 1).padStart(2, '0');
    const line =
      `person${i}@example${i % 1000}.com,First${i},Last${i % 5000},${countries[(i * 7) % 10]},${plans[i % 3]},${i % 250},` +
      `2025-03-${day},${i % 2 ? 'true' : 'false'},campaign-${i % 40}\n`;
    if (!file.write(line)) await once(file, 'drain');
  }
  file.end();
  await once(file, 'finish');
}

const SEGMENTS: { name: string; definition: unknown }[] = [
  { name: 'custom-field eq (plan = pro)', definition: { op: 'AND', rules: [{ type: 'field', field: 'custom_fields.plan', operator: 'eq', value: 'pro' }] } },
  {
    name: 'country in (FR, DE, US) and opened within 30 days',
    definition: {
      op: 'AND',
      rules: [
        { type: 'field', field: 'country', operator: 'in', value: ['FR', 'DE', 'US'] },
        { type: 'engagement', event: 'opened', operator: 'within', days: 30 },
      ],
    },
  },
  {
    name: 'nested OR (vip and seats > 200) or (team and signed up after 2025-03-20) or last name starts with Last1',
    definition: {
      op: 'OR',
      rules: [
        {
          op: 'AND',
          rules: [
            { type: 'field', field: 'custom_fields.vip', operator: 'eq', value: true },
            { type: 'field', field: 'custom_fields.seats', operator: 'gt', value: 200 },
          ],
        },
        {
          op: 'AND',
          rules: [
            { type: 'field', field: 'custom_fields.plan', operator: 'eq', value: 'team' },
            { type: 'field', field: 'custom_fields.signup_date', operator: 'after', value: '2025-03-20' },
          ],
        },
        { type: 'field', field: 'last_name', operator: 'starts_with', value: 'Last1' },
      ],
    },
  },
];

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** Times `fn` `runs` times in a row; p50 and p95 in ms. */
async function timed(runs: number, fn: () => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { p50: percentile(ms, 50), p95: percentile(ms, 95) };
}

/**
 * Over the imported contacts: 300,000 opens in the last 60 days (a third of them within 30 days of now), then each
 * segment counted 20 times, then a list holding every contact and its member count read 50 times.
 */
async function segmentsAndLists(sql: ReturnType<typeof connect>, tenantId: string): Promise<void> {
  const now = new Date();
  await sql`
    insert into events (id, tenant_id, type, recipient, detail, occurred_at)
    select gen_random_uuid(), ${tenantId}, 'open', c.email, '{}', ${now}::timestamptz - (random() * interval '60 days')
    from contacts c where c.tenant_id = ${tenantId} order by random() limit 300000`;
  await sql`analyze`;
  const lines: string[] = [];
  const deps = { sql, clock: systemClock, queries: new TenantQueries(sql, loadConfig({}).queries) };
  for (const s of SEGMENTS) {
    const count = await previewCount(deps, tenantId, s.definition);
    const t = await timed(20, () => previewCount(deps, tenantId, s.definition));
    lines.push(`   segment count, ${s.name}: ${count} contacts, p50 ${t.p50.toFixed(0)} ms, p95 ${t.p95.toFixed(0)} ms (goal p95 < 300 ms)`);
  }
  const at = new Date();
  const [list] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, 'everyone', ${at}, ${at}) returning id`;
  await sql`insert into list_members (list_id, contact_id, tenant_id, added_at)
            select ${list!.id}, id, ${tenantId}, ${at} from contacts where tenant_id = ${tenantId}`;
  const members = (await getList(sql, tenantId, list!.id)).member_count;
  const t = await timed(50, () => getList(sql, tenantId, list!.id));
  lines.push(
    `   list member count: ${members} members, p50 ${t.p50.toFixed(2)} ms, p95 ${t.p95.toFixed(2)} ms (goal < 50 ms)`,
    `   load average after: ${load()}`,
  );
  out(lines);
}

/**
 * Compiles the child (and the code it runs) to JavaScript under dist/, as `mailpath start` runs compiled code: under
 * tsx the process would carry the TypeScript compiler too (about 90 MiB of RSS that production does not have).
 */
function compileChild(): string {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const outDir = join(root, 'dist', 'bench-imports');
  const tsconfig = join(root, 'dist', 'tsconfig.bench-imports.json');
  mkdirSync(dirname(tsconfig), { recursive: true });
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(root, 'tsconfig.json'),
      compilerOptions: { outDir, rootDir: root, noEmit: false, incremental: false },
      include: ['main', 'api', 'shared', 'mta', 'plugins', 'jobs', 'bench/lib/import-child.ts'].map((p) => join(root, p)),
    }),
  );
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], { stdio: 'inherit' });
  return join(outDir, 'bench', 'lib', 'import-child.js');
}

function runChild(
  script: string,
  databaseUrl: string,
  importId: string,
  dataDir: string,
): Promise<{ outcome: string; seconds: number; cpuSeconds: number; maxRssMiB: number; heapMiB: number; arrayBuffersMiB: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, databaseUrl, importId, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(text.trim().split('\n').pop()!)) : reject(new Error(`import child exited ${code}`))));
  });
}

export default async function runAudiencesBench(): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbName = benchDatabaseName('audiences');
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-bench-audiences-'));
  const csvPath = join(dir, 'contacts.csv');
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    await admin.unsafe(`create database "${dbName}"`);
    cleanups.push(() => admin.unsafe(`drop database if exists "${dbName}" with (force)`));
    const config = loadConfig({ DATABASE_URL: dbUrl.toString(), MAILPATH_DATA_DIR: dir, MAILPATH_LOG_LEVEL: 'silent' });
    const log = createLogger('silent');
    const sql = connect(dbUrl.toString(), log, { max: 4 });
    cleanups.push(() => sql.end({ timeout: 5 }));
    await migrate(sql);
    const boss = await startBoss(sql, log, { supervise: false });
    cleanups.push(() => boss.stop({ graceful: false, wait: true }));
    const tenant = await insertTenant(sql, { name: 'Bench', slug: 'bench-imports' });
    const at = new Date();
    for (const f of [
      { key: 'plan', type: 'select' as const, options: ['free', 'pro', 'team'] },
      { key: 'seats', type: 'number' as const, options: null },
      { key: 'signup_date', type: 'date' as const, options: null },
      { key: 'vip', type: 'boolean' as const, options: null },
      { key: 'source', type: 'text' as const, options: null },
    ]) {
      await insertCustomField(sql, tenant.id, { ...f, label: f.key, required: false, position: 0 }, at);
    }

    await writeFile(csvPath);
    const bytes = statSync(csvPath).size;
    out([`audiences bench: ${cpus().length} cores, load average ${load()}; ${ROWS} rows, ${(bytes / 1048576).toFixed(1)} MiB of CSV`]);

    // Raw COPY of the same file into a bare table: the floor of what PostgreSQL can take in.
    await sql`create table bench_copy (email text, first_name text, last_name text, country text, plan text, seats text, signup_date text, vip text,
                                       source text)`;
    let t0 = performance.now();
    const writable = await sql`copy bench_copy from stdin with (format csv, header true)`.writable();
    await pipeline(createReadStream(csvPath), writable);
    const copySeconds = (performance.now() - t0) / 1000;
    const [copied] = await sql<{ n: number }[]>`select count(*)::int as n from bench_copy`;
    // The ceiling of any loader of the contacts table: the same rows inserted set-based, already inside PostgreSQL,
    // into a table with contacts' columns, indexes and triggers (index maintenance is what costs).
    await sql`create table bench_contacts (like contacts including all)`;
    await sql`create trigger bench_contacts_hash before insert on bench_contacts for each row execute function contacts_hash_email()`;
    t0 = performance.now();
    await sql`
      insert into bench_contacts (tenant_id, email, first_name, last_name, country, custom_fields, created_at, updated_at)
      select ${tenant.id}, email, first_name, last_name, country,
             jsonb_build_object('plan', plan, 'seats', seats::numeric, 'signup_date', signup_date, 'vip', vip::boolean, 'source', source), now(), now()
      from bench_copy`;
    const ceilingSeconds = (performance.now() - t0) / 1000;
    await sql`drop table bench_copy`;
    await sql`drop table bench_contacts`;

    // The upload as the API stores it: the file in chunks, then queued.
    t0 = performance.now();
    const row = await startImport(
      { sql, boss, clock: systemClock, log, config },
      {
        tenantId: tenant.id,
        apiKeyId: null,
        format: 'csv',
        options: { mapping: {}, on_existing: 'update', list_id: null, delimiter: ',' },
        body: createReadStream(csvPath),
      },
    );
    const uploadSeconds = (performance.now() - t0) / 1000;
    await sql`checkpoint`;

    const run = await runChild(compileChild(), dbUrl.toString(), row.id, dir);
    const [done] = await sql<{ status: string; rows_done: number; inserted: number; invalid: number }[]>`
      select status, rows_done::int, inserted::int, invalid::int from contact_imports where id = ${row.id}`;
    const copyRate = copied!.n / copySeconds;
    const importRate = done!.rows_done / run.seconds;
    out([
      `   raw COPY into a bare table: ${copied!.n} rows in ${copySeconds.toFixed(1)} s = ${Math.round(copyRate)} rows/s`,
      `   ceiling of the contacts table (set-based insert of the copied rows, its indexes and triggers): ${Math.round(copied!.n / ceilingSeconds)} rows/s`,
      `   upload (stored in ${row.chunks} chunks): ${uploadSeconds.toFixed(1)} s = ${(bytes / 1048576 / uploadSeconds).toFixed(1)} MiB/s`,
      `   import job: ${done!.status}, ${done!.rows_done} rows (${done!.inserted} inserted, ${done!.invalid} invalid) in ${run.seconds.toFixed(1)} s = ` +
        `${Math.round(importRate)} rows/s (${((importRate / copyRate) * 100).toFixed(0)} % of raw COPY; goal >= 50 %)`,
      `   importing process: peak RSS ${run.maxRssMiB.toFixed(0)} MiB (goal < 300 MB; peak JS heap ${run.heapMiB.toFixed(0)} MiB, Buffers ` +
        `${run.arrayBuffersMiB.toFixed(0)} MiB), ` +
        `CPU ${run.cpuSeconds.toFixed(1)} s of ${run.seconds.toFixed(1)} s`,
      `   load average after: ${load()}`,
    ]);
    await segmentsAndLists(sql, tenant.id);
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`));
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}
