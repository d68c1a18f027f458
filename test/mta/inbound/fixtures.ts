// Test fixtures for the MX: a real MX server on loopback (own database, loopback DNS, queues), tenant domains, mailboxes and webhooks as rows, and what a
// message stored.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type Config, type Env } from '../../../shared/config/index.js';
import { systemClock } from '../../../shared/kernel/clock.js';
import { connect, type Sql } from '../../../shared/db/connection.js';
import { INBOUND_BOUNCE_JOBS } from '../../../shared/inbound/jobs.js';
import { createLogger, type Logger } from '../../../shared/kernel/log.js';
import { startBoss, type Boss } from '../../../shared/jobs/boss.js';
import type { MxDeps } from '../../../mta/inbound/deps.js';
import type { PluginCatalogue } from '../../../mta/inbound/plugins.js';
import { startMx, type RunningMx } from '../../../mta/inbound/server.js';
import { buildServices } from '../../../main/services.js';
import { PLUGINS } from '../../../plugins/index.js';
import { createTestDatabase } from '../../helpers/db.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { loadTls } from '../../../shared/kernel/tls.js';
import { testEnv, type TestLike } from '../../helpers/app.js';
import { insertTenant } from '../../helpers/tenant-rows.js';

export const MX_HOST = 'mx.mailpath.test';

export interface TestMx {
  mx: RunningMx;
  port: number;
  deps: MxDeps;
  sql: Sql;
  config: Config;
  dns: TestDnsServer;
  boss: Boss;
}

let sharedTls: Promise<{ cert: string; key: string; dir: string }> | undefined;

/** One self-signed pair per test process: generating an RSA key is the slow part of starting an MX. */
function tlsFiles(): Promise<{ cert: string; key: string; dir: string }> {
  sharedTls ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailpath-mx-tls-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    await loadTls(loadConfig({ MAILPATH_DATA_DIR: dir, MAILPATH_HOSTNAME: MX_HOST }));
    return { cert: join(dir, 'tls', 'cert.pem'), key: join(dir, 'tls', 'key.pem'), dir };
  })();
  return sharedTls;
}

/** A database, loopback DNS, queues and a running MX (port 0), all torn down with the test. */
export async function startTestMx(t: TestLike, options: { env?: Env; log?: Logger; catalogue?: PluginCatalogue } = {}): Promise<TestMx> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-mx-'));
  const dns = await startDnsServer();
  const tls = await tlsFiles();
  const config = loadConfig(
    testEnv(db.url, dataDir, {
      MAILPATH_MX_PORT: '0',
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HOSTNAME: MX_HOST,
      MAILPATH_TLS_CERT: tls.cert,
      MAILPATH_TLS_KEY: tls.key,
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_CONFIG__DNS__TIMEOUT_MS: '300',
      MAILPATH_CONFIG__DNS__TRIES: '1',
      // Each test sees the DNS records it sets at once.
      MAILPATH_CONFIG__INBOUND__SENDER_AUTH__DNS_CACHE_SECONDS: '0',
      ...options.env,
    }),
  );
  const log = options.log ?? createLogger('silent');
  const sql = connect(db.url, log, { max: 4 });
  const boss = await startBoss(sql, log, { supervise: false });
  const deps = await buildServices({ config, sql, log, boss, clock: systemClock });
  const mx = await startMx(deps, options.catalogue ?? PLUGINS);
  t.teardown(async () => {
    await mx.stop();
    await deps.close();
    await boss.stop({ graceful: false, wait: true });
    await sql.end({ timeout: 5 });
    await dns.stop();
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return { mx, port: mx.port, deps, sql, config, dns, boss };
}

export interface TenantDomainOptions {
  name?: string;
  mxVerified?: boolean;
  /** The claim owns its name (default); false: a pending claim, as another tenant may hold of the same name. */
  owned?: boolean;
  webhook?: 'enabled' | 'disabled' | 'no-url' | 'none';
  mailboxes?: string[];
}

export interface TenantDomain {
  tenantId: string;
  domainId: string;
  name: string;
  mailboxIds: Record<string, string>;
}

/** A tenant owning a domain (or only claiming it), its MX record row (verified or not), its webhook setting and mailboxes. */
export async function tenantDomain(sql: Sql, options: TenantDomainOptions = {}): Promise<TenantDomain> {
  const tenantId = await insertTenant(sql);
  const name = options.name ?? `${randomUUID().slice(0, 8)}.example`;
  const ownedAt = options.owned === false ? null : new Date();
  const [domain] = await sql<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, owned_at, created_at) values (${tenantId}, ${name}, ${name}, ${ownedAt}, now()) returning id`;
  const domainId = domain!.id;
  const verified = options.mxVerified ?? true;
  await sql`
    insert into domain_records (domain_id, kind, type, host, expected, priority, verified, verified_at)
    values (${domainId}, 'mx', 'MX', ${name}, ${MX_HOST}, 10, ${verified}, ${verified ? new Date() : null})`;
  const webhook = options.webhook ?? 'enabled';
  if (webhook !== 'none') {
    await sql`
      insert into inbound_webhooks (tenant_id, webhook_url, enabled, updated_at)
      values (${tenantId}, ${webhook === 'no-url' ? null : 'https://hooks.example/inbound'}, ${webhook !== 'disabled'}, now())`;
  }
  const mailboxIds: Record<string, string> = {};
  for (const local of options.mailboxes ?? []) {
    const [row] = await sql<{ id: string }[]>`
      insert into mailboxes (id, tenant_id, domain_id, address, created_at, updated_at)
      values (${randomUUID()}, ${tenantId}, ${domainId}, ${`${local}@${name}`}, now(), now()) returning id`;
    mailboxIds[local] = row!.id;
  }
  return { tenantId, domainId, name, mailboxIds };
}

export const countOf = async (sql: Sql, table: string): Promise<number> => (await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)}`)[0]!.n;

/** Rows in every inbound table and inbound jobs: for "nothing was stored" assertions. */
export async function storedCounts(sql: Sql): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['inbound_messages', 'inbound_recipients', 'mailbox_messages', 'inbound_webhook_deliveries']) counts[table] = await countOf(sql, table);
  counts['jobs'] = (await sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${INBOUND_BOUNCE_JOBS}`)[0]!.n;
  return counts;
}

export const NOTHING_STORED = { inbound_messages: 0, inbound_recipients: 0, mailbox_messages: 0, inbound_webhook_deliveries: 0, jobs: 0 };

/** A small message with CRLF line endings. */
export function message(headers: Record<string, string>, body = 'Hello.\r\n'): string {
  return `${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${body}`;
}
