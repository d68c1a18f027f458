// Benchmark: sending domains — adding domains (DKIM key generation), the scheduled re-check, and the DKIM rotator tick.
//
// Goals:
//   1. Adding a domain (an RSA-2048 DKIM key generated off the event loop, 4 adds at a time): p99 under 1 s on 2 cores.
//   2. Re-check (recheckAllDomains) against a loopback resolver: at least 200 domains/s, so the 6-hourly re-check
//      of 100k domains takes well under 6 hours. Two passes are timed: the first verifies every domain (an audit row
//      each), the second is the steady state (nothing changes); both must meet the goal, and every domain must verify.
//   3. One rotator tick (runRotator) activating publishing rotations seen on 3 loopback public resolvers: 100 rotations/s.
// The loopback DNS servers (test/helpers/dns-server.ts) run in this process and share its event loop and cores with
// the code measured, as does PostgreSQL; the load average and this process's CPU time are printed.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_DOMAINS (default 40) domains are added through createDomain; BENCH_RECHECK_DOMAINS (default 2000) are
// re-checked, most of them cloned in SQL from the added ones (their sealed keys then do not open: nothing here signs);
// BENCH_ROTATIONS (default 200) rotations are activated, 20 started through startRotation and the rest cloned.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import type { AuditActor } from '../shared/operations/audit/log.js';
import { systemClock } from '../shared/kernel/clock.js';
import { loadConfig } from '../shared/config/index.js';
import { connect, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import type { DomainDeps } from '../shared/deliverability/domains/deps.js';
import { buildServices } from '../main/services.js';
import { startBoss } from '../shared/jobs/boss.js';
import { listRecords } from '../shared/deliverability/domains/queries.js';
import { dkimRecord } from '../shared/deliverability/domains/records.js';
import { startRotation } from '../shared/deliverability/domains/rotation.js';
import { rotationsInStates } from '../shared/deliverability/domains/rotation-queries.js';
import { runRotator } from '../shared/deliverability/domains/rotator.js';
import { createDomain } from '../shared/deliverability/domains/service.js';
import { recheckAllDomains } from '../shared/deliverability/domains/verification.js';
import { createLogger } from '../shared/kernel/log.js';
import { insertTenant } from '../shared/accounts/tenants/queries.js';
import { startDnsServer, type TestDnsServer } from '../test/helpers/dns-server.js';
import { publishRecords, type ApiRecord } from '../test/helpers/domains.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const envCount = (name: string, fallback: number, max: number) => Math.min(max, Math.max(1, Math.floor(Number(process.env[name] ?? fallback)) || fallback));
const ADD_DOMAINS = envCount('BENCH_DOMAINS', 40, 1000);
const RECHECK_DOMAINS = envCount('BENCH_RECHECK_DOMAINS', 2000, 100_000);
/** The rotator handles 500 publishing rotations per tick: more would need a second tick. */
const ROTATIONS = envCount('BENCH_ROTATIONS', 200, 500);
const ADD_CONCURRENCY = 4;
/** Domains created through createDomain that the cloned ones copy (at least this many, so clones vary their keys). */
const MIN_SEEDS = 20;
/** Rotations started through startRotation; the rest are cloned from them. */
const REAL_ROTATIONS = 20;
const PUBLIC_RESOLVERS = 3;
const GOAL = { addP99Ms: 1000, recheckPerSec: 200, rotationsPerSec: 100 };
const ACTOR: AuditActor = { type: 'system', id: 'bench' };

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const mib = (bytes: number) => `${fmt(bytes / 1_048_576, 1)} MiB`;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const verdict = (met: boolean) => (met ? 'goal met' : 'GOAL MISSED');
const cpuSeconds = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1e6;
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

/** Nearest-rank percentile of an ascending array. */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Runs fn over items, `limit` at a time; resolves with the results in item order. */
async function pool<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

export interface DomainsFigures {
  add: { count: number; perSec: number; p50Ms: number; p99Ms: number; met: boolean };
  recheck: { domains: number; seconds: number; perSec: number; queriesPerSec: number; verified: number; steadyPerSec: number; met: boolean };
  rotator: { rotations: number; activated: number; seconds: number; perSec: number; met: boolean };
}

/** 1. createDomain ADD_DOMAINS times, ADD_CONCURRENCY at a time: per-add latency and adds per second. */
async function benchAdd(deps: DomainDeps, tenantId: string): Promise<{ figures: DomainsFigures['add']; ids: string[] }> {
  const names = Array.from({ length: Math.max(ADD_DOMAINS, MIN_SEEDS) }, (_, i) => `d${i + 1}.bench-domains.test`);
  const measured = names.slice(0, ADD_DOMAINS);
  const latencies: number[] = [];
  const started = performance.now();
  const ids = await pool(measured, ADD_CONCURRENCY, async (name) => {
    const t0 = performance.now();
    const detail = await createDomain(deps, tenantId, ACTOR, name);
    latencies.push(performance.now() - t0);
    return detail.domain.id;
  });
  const seconds = (performance.now() - started) / 1000;
  // Seeds for the clones below, unmeasured, when fewer domains were added than the clones want to copy.
  ids.push(...(await pool(names.slice(ADD_DOMAINS), ADD_CONCURRENCY, async (name) => (await createDomain(deps, tenantId, ACTOR, name)).domain.id)));
  latencies.sort((a, b) => a - b);
  const p50Ms = percentile(latencies, 50);
  const p99Ms = percentile(latencies, 99);
  const met = p99Ms < GOAL.addP99Ms;
  out([
    `1. adding domains (createDomain, RSA-${deps.config.dkim.key_bits} DKIM key each, ${ADD_CONCURRENCY} at a time)`,
    `   ${fmt(ADD_DOMAINS)} domains in ${fmt(seconds, 2)} s: ${fmt(ADD_DOMAINS / seconds, 1)} domains/s`,
    `   latency per add: p50 ${fmt(p50Ms, 0)} ms, p99 ${fmt(p99Ms, 0)} ms, max ${fmt(latencies[latencies.length - 1] ?? 0, 0)} ms (goal: p99 < ` +
      `${fmt(GOAL.addP99Ms)} ms): ${verdict(met)}`,
  ]);
  return { figures: { count: ADD_DOMAINS, perSec: ADD_DOMAINS / seconds, p50Ms, p99Ms, met }, ids };
}

/**
 * Copies the seed domains (rows, records, active key) until RECHECK_DOMAINS domains exist: clone g of seed
 * s is named r<g>-<s>, and its record hosts follow. Returns how many domains were cloned.
 */
async function cloneDomains(sql: Sql, seedIds: string[]): Promise<number> {
  const [{ n: existing } = { n: 0 }] = await sql<{ n: number }[]>`select count(*)::int as n from domains`;
  const need = RECHECK_DOMAINS - existing;
  if (need <= 0) return 0;
  const rounds = Math.ceil(need / seedIds.length);
  await sql.begin(async (tx) => {
    await tx`
      create temp table clone_map on commit drop as
      select s.id as src_id, s.name as src_name, s.tenant_id, gen_random_uuid() as id, 'r' || g || '-' || s.name as name
      from domains s cross join generate_series(1, ${rounds}::int) g
      where s.id = any(${seedIds}::uuid[])
      order by g, s.name
      limit ${need}`;
    await tx`
      insert into domains (id, tenant_id, name, unicode_name, created_at)
      select id, tenant_id, name, name, now() from clone_map`;
    await tx`
      insert into domain_records (domain_id, kind, type, host, expected, priority)
      select m.id, r.kind, r.type, left(r.host, length(r.host) - length(m.src_name)) || m.name, r.expected, r.priority
      from clone_map m join domain_records r on r.domain_id = m.src_id`;
    await tx`
      insert into dkim_keys (tenant_id, domain_id, selector, key_bits, public_key, private_key_sealed, state, created_at, activated_at)
      select m.tenant_id, m.id, k.selector, k.key_bits, k.public_key, k.private_key_sealed, 'active', now(), now()
      from clone_map m join dkim_keys k on k.domain_id = m.src_id and k.state = 'active'`;
  });
  await sql`analyze domains, domain_records, dkim_keys`;
  return need;
}

/** Every domain's records, published on the server as a tenant would (long TXT texts split into strings). */
async function publishAll(sql: Sql, dns: TestDnsServer): Promise<number> {
  let published = 0;
  let after = '00000000-0000-0000-0000-000000000000';
  for (let page = 0; page < 10_000; page++) {
    const ids = (await sql<{ id: string }[]>`select id from domains where id > ${after} order by id limit 1000`).map((r) => r.id);
    if (ids.length === 0) break;
    const records = await listRecords(sql, ids);
    publishRecords(
      dns,
      records.map((r): ApiRecord => ({ kind: r.kind, type: r.type, host: r.host, value: r.expected, priority: r.priority })),
    );
    published += records.length;
    after = ids[ids.length - 1]!;
  }
  return published;
}

/** 2. recheckAllDomains over RECHECK_DOMAINS domains whose records are all published on the loopback resolver. */
async function benchRecheck(deps: DomainDeps, dns: TestDnsServer, seedIds: string[]): Promise<DomainsFigures['recheck']> {
  const { sql } = deps;
  const cloneStart = performance.now();
  const cloned = await cloneDomains(sql, seedIds);
  const [{ n: total } = { n: 0 }] = await sql<{ n: number }[]>`select count(*)::int as n from domains`;
  const published = await publishAll(sql, dns);
  out([
    `2. re-check (recheckAllDomains) of ${fmt(total)} domains (${fmt(cloned)} cloned in SQL), ${fmt(published)} records published on ${dns.address}`,
    `   set-up ${fmt((performance.now() - cloneStart) / 1000, 1)} s`,
  ]);

  const pass = async (label: string) => {
    const queries0 = dns.queries();
    const audit0 = (await sql<{ n: number }[]>`select count(*)::int as n from audit_events`)[0]!.n;
    const mem0 = process.memoryUsage();
    const cpu0 = process.cpuUsage();
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    const summary = await recheckAllDomains(deps);
    const seconds = (performance.now() - t0) / 1000;
    const elu = performance.eventLoopUtilization(elu0).utilization;
    const cpu = cpuSeconds(process.cpuUsage(cpu0));
    const mem1 = process.memoryUsage();
    const queries = dns.queries() - queries0;
    const audit = (await sql<{ n: number }[]>`select count(*)::int as n from audit_events`)[0]!.n - audit0;
    const [{ n: verified } = { n: 0 }] = await sql<{ n: number }[]>`select count(*)::int as n from domains where verified_at is not null`;
    const perSec = summary.checked / seconds;
    out([
      `   ${label}: ${fmt(summary.checked)} checked in ${fmt(seconds, 2)} s: ${fmt(perSec, 1)} domains/s (goal >= ${GOAL.recheckPerSec}): ` +
        `${verdict(perSec >= GOAL.recheckPerSec)}`,
      `      DNS: ${fmt(queries)} queries, ${fmt(queries / seconds, 0)} queries/s (${fmt(queries / Math.max(1, summary.checked), 1)} per domain); ` +
        `audit rows written: ${fmt(audit)}`,
      `      summary: verified ${fmt(summary.verified)}, drifted ${summary.drifted}, look-up failures ${summary.lookupFailures}, failed ${summary.failed}; ` +
        `domains verified now: ${fmt(verified)} of ${fmt(total)}${verified === total ? ' (all)' : ' (NOT ALL)'}`,
      `      RSS ${mib(mem0.rss)} -> ${mib(mem1.rss)}, heap used ${mib(mem0.heapUsed)} -> ${mib(mem1.heapUsed)}`,
      `      this process (Mailpath and the loopback DNS server): ${fmt(cpu, 2)} s CPU (${fmt((cpu / seconds) * 100)}% of wall time), event loop ` +
        `${fmt(elu * 100)}% busy`,
      `      at 100k domains: ~${fmt(100_000 / perSec / 60, 1)} minutes per re-check (every ${deps.config.dns.domain_recheck_hours} h)`,
    ]);
    return { seconds, perSec, queries, verified, summary };
  };

  const first = await pass('first pass (every domain becomes verified, one audit row each)');
  const steady = await pass('steady state (nothing changes, no audit rows)');
  const met = first.perSec >= GOAL.recheckPerSec && steady.perSec >= GOAL.recheckPerSec && first.verified === total;
  out([`   re-check: ${verdict(met)}${first.verified === total ? '' : ' (not every domain verified)'}`]);
  return {
    domains: total,
    seconds: first.seconds,
    perSec: first.perSec,
    queriesPerSec: first.queries / first.seconds,
    verified: first.verified,
    steadyPerSec: steady.perSec,
    met,
  };
}

/** 3. One runRotator tick over ROTATIONS publishing rotations whose new records every public resolver returns. */
async function benchRotator(deps: DomainDeps, tenantId: string, publicDns: TestDnsServer[], seedIds: string[]): Promise<DomainsFigures['rotator']> {
  const { sql } = deps;
  const setupStart = performance.now();
  const real = Math.min(REAL_ROTATIONS, ROTATIONS, seedIds.length);
  await pool(seedIds.slice(0, real), ADD_CONCURRENCY, (id) => startRotation(deps, tenantId, id, ACTOR, { reason: 'bench', initiatedBy: 'tenant' }));
  const need = ROTATIONS - real;
  if (need > 0) {
    // Clone: a pending key copied from one of the real rotations' new keys (selector suffixed -b) and a publishing rotation.
    await sql.begin(async (tx) => {
      await tx`
        create temp table rotation_map on commit drop as
        select t.id as domain_id, t.tenant_id, a.id as old_key_id, gen_random_uuid() as new_key_id, tpl.new_key_id as tpl_key_id
        from (select d.id, d.tenant_id, row_number() over (order by d.id) - 1 as rn
              from domains d where not exists (select 1 from dkim_rotations r where r.domain_id = d.id)
              order by d.id limit ${need}) t
        join dkim_keys a on a.domain_id = t.id and a.state = 'active'
        join (select new_key_id, row_number() over (order by id) - 1 as rn from dkim_rotations) tpl on tpl.rn = t.rn % ${real}`;
      await tx`
        insert into dkim_keys (id, tenant_id, domain_id, selector, key_bits, public_key, private_key_sealed, state, created_at)
        select m.new_key_id, m.tenant_id, m.domain_id, k.selector || '-b', k.key_bits, k.public_key, k.private_key_sealed, 'pending', now()
        from rotation_map m join dkim_keys k on k.id = m.tpl_key_id`;
      await tx`
        insert into dkim_rotations (tenant_id, domain_id, old_key_id, new_key_id, state, reason, initiated_by, created_at, updated_at)
        select tenant_id, domain_id, old_key_id, new_key_id, 'publishing', 'bench clone', 'tenant', now(), now() from rotation_map`;
    });
    await sql`analyze dkim_keys, dkim_rotations`;
  }
  const publishing = await rotationsInStates(sql, ['publishing'], ROTATIONS + 1);
  for (const rotation of publishing) {
    const record = dkimRecord(rotation.domain_name, { selector: rotation.new_selector, publicKey: rotation.new_public_key });
    for (const server of publicDns) publishRecords(server, [{ ...record }]);
  }
  out([
    `3. rotator tick (runRotator) over ${fmt(publishing.length)} publishing rotations (${real} via startRotation, ${fmt(publishing.length - real)} ` +
      `cloned), new records on ${publicDns.length} public resolvers`,
    `   set-up ${fmt((performance.now() - setupStart) / 1000, 1)} s`,
  ]);

  const queries0 = publicDns.reduce((n, s) => n + s.queries(), 0);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const summary = await runRotator(deps);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(process.cpuUsage(cpu0));
  const queries = publicDns.reduce((n, s) => n + s.queries(), 0) - queries0;
  const [{ n: active } = { n: 0 }] = await sql<{ n: number }[]>`select count(*)::int as n from dkim_rotations where state = 'active'`;
  const perSec = summary.activated / seconds;
  const met = perSec >= GOAL.rotationsPerSec && summary.activated === publishing.length;
  out([
    `   ${fmt(summary.activated)} of ${fmt(publishing.length)} activated in ${fmt(seconds, 2)} s: ${fmt(perSec, 1)} rotations/s (goal >= ` +
      `${GOAL.rotationsPerSec}): ${verdict(met)}`,
    `      summary: checked ${summary.checked}, waiting ${summary.waiting}, failed ${summary.failed}; rotations now active: ${fmt(active)}; DNS: ` +
      `${fmt(queries)} queries, ${fmt(queries / seconds, 0)}/s`,
    `      ${fmt((seconds * 1000) / Math.max(1, summary.checked), 1)} ms of wall time per rotation (8 checked at once); this process ${fmt(cpu, 2)} ` +
      `s CPU (${fmt((cpu / seconds) * 100)}% of wall time)`,
  ]);
  return { rotations: publishing.length, activated: summary.activated, seconds, perSec, met };
}

export default async function runDomainsBench(): Promise<DomainsFigures> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-bench-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    await admin.unsafe(`create database "${dbName}"`);
    cleanups.push(() => admin.unsafe(`drop database if exists "${dbName}" with (force)`));
    const dns = await startDnsServer();
    cleanups.push(() => dns.stop());
    const publicDns: TestDnsServer[] = [];
    for (let i = 0; i < PUBLIC_RESOLVERS; i++) {
      const server = await startDnsServer();
      cleanups.push(() => server.stop());
      publicDns.push(server);
    }
    const config = loadConfig({
      DATABASE_URL: dbUrl.toString(),
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_LOG_LEVEL: 'silent',
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_PUBLIC_RESOLVERS: publicDns.map((s) => s.address).join(','),
      MAILPATH_HOSTNAME: 'mx.mailpath.test',
    });
    const log = createLogger('silent');
    const sql = connect(config.databaseUrl!, log, { max: 10 });
    cleanups.push(() => sql.end({ timeout: 5 }));
    await migrate(sql);
    // The domain services as a mailpath process builds them (they need the job queues too).
    const boss = await startBoss(sql, log, { supervise: false });
    cleanups.push(() => boss.stop({ graceful: false, wait: true }));
    const deps = await buildServices({ config, sql, log, boss, clock: systemClock });
    cleanups.push(() => deps.close());
    const tenant = await insertTenant(sql, { name: 'Bench', slug: 'bench-domains' });

    out([
      `domains bench: ${cpus().length} cores, load average ${load()}; PostgreSQL pool of 10; DNS timeout ${config.dns.timeout_ms} ms x ${config.dns.tries} ` +
        `tries`,
    ]);
    const add = await benchAdd(deps, tenant.id);
    const recheck = await benchRecheck(deps, dns, add.ids);
    const rotator = await benchRotator(deps, tenant.id, publicDns, add.ids);
    out([`   load average after: ${load()}`, '']);
    return { add: add.figures, recheck, rotator };
  } finally {
    // Pool first, then the servers, then the database (drop ... with (force) ends any connection left).
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`));
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
