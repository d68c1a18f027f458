// The deployment the send-path benchmarks measure: a database of their own, Mailpath built and run as two processes on it
// (a front process and the outbound role, as deployed to use more than one core), a registered tenant on an unlimited plan
// with a verified sending domain and its rsa-2048 DKIM key, and Postfix relaying the same load as the peer.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { configOverrides } from '../../shared/config/index.js';
import { generateDkimKey, storeKey } from '../../shared/deliverability/domains/dkim-keys.js';
import { projectRoot } from '../../shared/kernel/paths.js';
import { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import { freePort } from '../../test/helpers/net.js';
import { machineBusySeconds } from './cpu.js';
import { httpsJson } from './http.js';
import { startProcess, waitFor, type Child } from './mailpath.js';
import { postfixQueued, startPostfix, stopPostfix } from './postfix-peer.js';
import { SMTP_SOURCE } from './smtp-load.js';
import { ADMIN_URL, benchDatabaseName } from './bench-database.js';

const run = promisify(execFile);

export interface DeploymentOptions {
  /** Names the bench in progress lines and temp dirs. */
  name: string;
  /** Roles of the front process (the outbound process always has the outbound role alone). */
  frontRoles: string;
  /** Relay every delivery to this port (Postfix's smtp-sink). */
  sinkPort: number;
  /** Ports to allocate and pass to both processes, by environment variable (e.g. MAILPATH_SUBMISSION_PORT). */
  extraPorts?: string[];
  extraEnv?: Record<string, string>;
  /** Processes with the outbound role (default 1): one per core lets each core run an event loop of the send path. */
  outboundProcesses?: number;
  /** Environment of the outbound processes only (e.g. their share of a campaign's fan-out jobs). */
  outboundEnv?: Record<string, string>;
}

export interface Deployment {
  /** The bench database (two connections). */
  sql: postgres.Sql;
  apiPort: number;
  /** The ports allocated for `extraPorts`, by variable name. */
  ports: Record<string, number>;
  front: Child;
  /** The first outbound process. */
  outbound: Child;
  /** Every outbound process (`outboundProcesses` of them). */
  outbounds: Child[];
  /** The benchmark tenant: its id and owner session token. */
  tenantId: string;
  token: string;
  /** Registers one more tenant (`slug`), as the benchmark tenant was: unlimited plan, `<slug>.test` verified with an active DKIM key. */
  addTenant(slug: string): Promise<BenchTenant>;
  /** Stops both processes (idempotent), before the peer runs on the same cores. */
  stopMailpath(): Promise<void>;
  /** Stops everything and drops the database and data dir; never throws. */
  close(): Promise<void>;
}

export interface BenchTenant {
  tenantId: string;
  /** The owner's session token. */
  token: string;
  /** Its verified sending domain. */
  domain: string;
}

/** Creates the database, builds and starts Mailpath, registers the tenant and gives it `bench.test` with an active DKIM key. */
export async function startDeployment(o: DeploymentOptions): Promise<Deployment> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), `mailpath-bench-${o.name}-`));
  const masterKey = randomBytes(32).toString('hex');
  await admin.unsafe(`create database "${dbName}"`);
  const sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
  const children: Child[] = [];
  const stopMailpath = async () => {
    for (const c of children.reverse()) await c.stop().catch(() => {});
    children.length = 0;
  };
  const close = async () => {
    await stopMailpath();
    await sql.end().catch(() => {});
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => {});
    await admin.end().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const [apiPort, httpPort] = [await freePort(), await freePort()];
    const ports: Record<string, number> = {};
    for (const name of o.extraPorts ?? []) ports[name] = await freePort();
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DATABASE_URL: dbUrl.toString(),
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: String(apiPort),
      MAILPATH_HTTP_PORT: String(httpPort),
      MAILPATH_METRICS_PORT: '0',
      MAILPATH_PUBLIC_URL: `https://localhost:${apiPort}`,
      MAILPATH_OUTBOUND_RELAY: `127.0.0.1:${o.sinkPort}`,
      MAILPATH_MASTER_KEY: masterKey,
      MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[10000000]',
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      ...o.extraEnv,
      // MAILPATH_CONFIG__… given to the bench reach the measured processes (an experiment with a setting), over the above.
      ...configOverrides(process.env),
    };
    process.stdout.write(`${o.name} bench: building (npm run build) ...\n`);
    await run('npm', ['run', 'build'], { cwd: projectRoot() });
    const front = await startProcess({ ...env, MAILPATH_ROLES: o.frontRoles }, apiPort);
    children.push(front);
    const outbounds: Child[] = [];
    for (let i = 1; i <= (o.outboundProcesses ?? 1); i++) {
      const child = await startProcess({ ...env, ...o.outboundEnv, MAILPATH_ROLES: 'outbound', MAILPATH_DATA_DIR: join(dataDir, `outbound${i}`) }, undefined);
      children.push(child);
      outbounds.push(child);
    }

    const vault = new SealedBox(Buffer.from(masterKey, 'hex'));
    await sql`insert into plans (id, name, monthly_send_cap) values ('bench', 'Bench', 1000000000)`;
    const addTenant = async (slug: string): Promise<BenchTenant> => {
      const register = await httpsJson(apiPort, 'POST', '/api/v1/auth/register', {
        tenant_name: slug,
        tenant_slug: slug,
        email: `owner@${slug}.test`,
        password: 'Correct-horse-42',
      });
      const tenantId = register.data.tenant_id as string;
      await sql`update tenants set plan_id = 'bench' where id = ${tenantId}`;
      const name = `${slug}.test`;
      const [domain] = await sql<{ id: string }[]>`
        insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at)
        values (${tenantId}, ${name}, ${name}, now(), now(), now()) returning id`;
      await storeKey(sql, vault, { tenantId, domainId: domain!.id, selector: 'bench', key: await generateDkimKey(2048), state: 'active', at: new Date() });
      return { tenantId, token: register.data.token as string, domain: name };
    };
    const { tenantId, token } = await addTenant('bench');
    return { sql, apiPort, ports, front, outbound: outbounds[0]!, outbounds, tenantId, token, addTenant, stopMailpath, close };
  } catch (err) {
    await close();
    throw err;
  }
}

export interface PostfixRelayFigures {
  acceptedPerSec: number;
  deliveredPerSec: number;
  /** CPU of the whole machine per message while Postfix worked (its processes are many and short-lived). */
  machineMs: number;
}

/** Postfix accepting `messages` of `bytes` from smtp-source over `sessions` sessions and relaying them to the sink; delivered when its queue is empty. */
export async function postfixRelay(sinkPort: number, o: { messages: number; bytes: number; sessions: number }): Promise<PostfixRelayFigures> {
  const listen = await freePort();
  await startPostfix(listen, sinkPort);
  const machineBefore = machineBusySeconds();
  try {
    const started = performance.now();
    await run(
      SMTP_SOURCE,
      ['-4', '-s', String(o.sessions), '-m', String(o.messages), '-l', String(o.bytes), '-f', 'a@example.test', '-t', 'b@example.test', `127.0.0.1:${listen}`],
      { maxBuffer: 1 << 24, timeout: 30 * 60_000 },
    );
    const acceptedAt = performance.now();
    const doneAt = await waitFor(async () => o.messages - (await postfixQueued()), o.messages, 'Postfix queue drained');
    return {
      acceptedPerSec: o.messages / ((acceptedAt - started) / 1000),
      deliveredPerSec: o.messages / ((doneAt - started) / 1000),
      machineMs: ((machineBusySeconds() - machineBefore) * 1000) / o.messages,
    };
  } finally {
    await stopPostfix();
  }
}
