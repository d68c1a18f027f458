// Benchmark: the MX receiving smtp-source's load (20 parallel sessions, ~5 KB messages) stored durably in PostgreSQL, against Postfix accepting the same
// load into its own queue.
//
// Goal: accepted msg/s at least Postfix's (aim 1.5x) on the same machine with the same load generator.
// Mailpath runs compiled (npm run build) as one process with the mx role, every plugin of config/plugins.yaml enabled (SPF, DKIM
// and DMARC checked through a loopback DNS server), each message committed with its recipient row, webhook
// delivery and job before its 250. Postfix (../shared/bench/postfix-peer.sh) queues each message on disk
// (fsync) before its 250; its delivery is held (defer_transports) so both sides only receive.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides), Postfix and smtp-source (the peer
// script installs them). BENCH_MESSAGES sets the count (default 20000); BENCH_MX_REUSE=1 sends many
// messages per connection (smtp-source -d) instead of one connection per message.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { projectRoot } from '../shared/kernel/paths.js';
import { startDnsServer } from '../test/helpers/dns-server.js';
import { machineBusySeconds } from './lib/cpu.js';
import { ensurePostfix, postfixQueued, startPostfix, startSink, stopPostfix } from './lib/postfix-peer.js';
import { cpuSecondsOf, cpuSecondsOfCommands, smtpSource, waitForGreeting, type LoadOptions } from './lib/smtp-load.js';
import { freePort } from '../test/helpers/net.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const run = promisify(execFile);
const MESSAGES = Math.max(100, Number(process.env['BENCH_MESSAGES'] ?? 20_000));
const WARM_UP = Math.min(500, Math.ceil(MESSAGES / 10));
const SESSIONS = 20;
const PAYLOAD_BYTES = 5120;
const REUSE = process.env['BENCH_MX_REUSE'] === '1';
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Figures {
  perSecond: number;
  /** CPU ms per message of the server's own processes (undefined when it cannot be told) and of the whole machine (load generator included). */
  serverMs: number | undefined;
  machineMs: number;
  detail: string;
}

/** Times one smtp-source run and the CPU the server's processes (each counter) and the machine spent on it, in ms per message. */
async function measure(load: LoadOptions, counters: (() => number)[]): Promise<{ seconds: number; serverMs: number[]; machineMs: number }> {
  const [before, machine] = [counters.map((c) => c()), machineBusySeconds()];
  const seconds = await smtpSource(load);
  const perMessage = (s: number) => (s * 1000) / load.messages;
  return { seconds, serverMs: counters.map((c, i) => perMessage(c() - before[i]!)), machineMs: perMessage(machineBusySeconds() - machine) };
}

async function benchMailpath(dbUrl: string, sql: postgres.Sql): Promise<Figures> {
  const dns = await startDnsServer();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-bench-mx-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  try {
    // The sender's domain as a real one would publish it: checks pass, and the answers are cached.
    dns.setTxt('sender.bench.test', ['v=spf1 ip4:127.0.0.1 -all']);
    dns.setTxt('_dmarc.sender.bench.test', ['v=DMARC1; p=none']);
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DATABASE_URL: dbUrl,
      MAILPATH_ROLES: 'mx',
      MAILPATH_METRICS_PORT: '0',
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_MX_PORT: String(port),
      MAILPATH_HOSTNAME: 'mx.bench.test',
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_MASTER_KEY: randomBytes(32).toString('hex'),
      MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_DB_POOL_SIZE: process.env['BENCH_POOL'] ?? '10',
    };
    // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the Mailpath process.
    const nodeArgs = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
    const spawned = spawn(process.execPath, [...nodeArgs, ...(await entryPoint())], { cwd: projectRoot(), env, stdio: ['ignore', 'ignore', 'inherit'] });
    child = spawned;
    await waitForGreeting(port, 60_000, () => spawned.exitCode === null);

    const tenantId = randomUUID();
    await sql`insert into tenants (id, name, slug, plan_id) values (${tenantId}, 'Bench', 'bench', 'free')`;
    const [domain] = await sql<
      { id: string }[]
    >`insert into domains (tenant_id, name, unicode_name, owned_at, created_at) values (${tenantId}, 'bench.test', 'bench.test', now(), now()) returning id`;
    await sql`insert into domain_records (domain_id, kind, type, host, expected, priority, verified)
              values (${domain!.id}, 'mx', 'MX', 'bench.test', 'mx.bench.test', 10, true)`;
    await sql`insert into inbound_webhooks (tenant_id, webhook_url, enabled, updated_at) values (${tenantId}, 'https://hooks.bench.test/inbound', true, now())`;

    const load = (messages: number): LoadOptions => ({
      port,
      messages,
      sessions: SESSIONS,
      bytes: PAYLOAD_BYTES,
      from: 'load@sender.bench.test',
      to: 'inbox@bench.test',
      reuseConnections: REUSE,
    });
    await smtpSource(load(WARM_UP));
    const pid = spawned.pid!;
    const m = await measure(load(MESSAGES), [() => cpuSecondsOf(pid), () => cpuSecondsOfCommands(['postgres'])]);
    const [stored] = await sql<{ messages: number; deliveries: number }[]>`
      select (select count(*)::int from inbound_messages) as messages,
             (select count(*)::int from inbound_webhook_deliveries where status = 'pending') as deliveries`;
    const expected = MESSAGES + WARM_UP;
    if (stored!.messages !== expected || stored!.deliveries !== expected)
      throw new Error(`stored ${stored!.messages} messages and ${stored!.deliveries} webhook deliveries, expected ${expected} of each`);
    const [node, pg] = m.serverMs as [number, number];
    return {
      perSecond: MESSAGES / m.seconds,
      serverMs: node + pg,
      machineMs: m.machineMs,
      detail: `Mailpath ${fmt(node, 2)} ms + PostgreSQL ${fmt(pg, 2)} ms; all ${fmt(expected)} messages and webhook deliveries stored`,
    };
  } finally {
    if (child && child.exitCode === null) {
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child!.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
    await dns.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The compiled program, as deployed (npm run build). tsc writes the JavaScript even when another
 * file fails to type-check; only when there is none does the bench run the sources through tsx.
 */
async function entryPoint(): Promise<string[]> {
  const started = Date.now();
  const built = join(projectRoot(), 'dist', 'main', 'cli.js');
  await run('npm', ['run', 'build'], { cwd: projectRoot(), maxBuffer: 1 << 24 }).catch((err: { stdout?: string }) => {
    process.stdout.write(
      `  (npm run build reported errors; using what it wrote)\n${String(err.stdout ?? '')
        .split('\n')
        .filter((l) => l.includes('error TS'))
        .slice(0, 5)
        .join('\n')}\n`,
    );
  });
  if (existsSync(built) && statSync(built).mtimeMs >= started - 1000) return [built, 'start'];
  process.stdout.write('  (no fresh build: running the sources through tsx)\n');
  return ['--import', 'tsx', 'main/cli.ts', 'start'];
}

async function benchPostfix(): Promise<Figures> {
  const [listen, sinkPort] = [await freePort(), await freePort()];
  const stopSink = await startSink(sinkPort);
  try {
    await startPostfix(listen, sinkPort);
    // Only receiving is measured on both sides: Postfix keeps what it queued (main.cf is restored at stop).
    await run('postconf', ['-e', 'defer_transports = smtp']);
    await run('postfix', ['reload']);
    await waitForGreeting(listen, 30_000, () => true);
    const load = (messages: number): LoadOptions => ({
      port: listen,
      messages,
      sessions: SESSIONS,
      bytes: PAYLOAD_BYTES,
      from: 'load@sender.bench.test',
      to: 'inbox@bench.test',
      reuseConnections: REUSE,
    });
    await smtpSource(load(WARM_UP));
    // Postfix's smtpd processes exit and are replaced as they serve connections, taking their CPU
    // time with them: only the whole machine's figure is comparable.
    const m = await measure(load(MESSAGES), []);
    const queued = await postfixQueued();
    return { perSecond: MESSAGES / m.seconds, serverMs: undefined, machineMs: m.machineMs, detail: `${fmt(queued)} messages in its queue (warm-up included)` };
  } finally {
    await run('postsuper', ['-d', 'ALL']).catch(() => {});
    await stopPostfix();
    stopSink();
  }
}

export default async function runMxBench(): Promise<void> {
  await ensurePostfix();
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  await admin.unsafe(`create database "${dbName}"`);
  const sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
  try {
    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    const mode = REUSE ? 'connections reused (-d)' : 'one connection per message';
    process.stdout.write(
      `mx bench: ${fmt(MESSAGES)} messages of ${PAYLOAD_BYTES} bytes, ${SESSIONS} parallel smtp-source sessions, ${mode} (after ${WARM_UP} to warm ` +
        `up); ${cpus().length} cores, load average ${load()}\n`,
    );
    const mailpath = await benchMailpath(dbUrl.toString(), sql);
    process.stdout.write(
      `  Mailpath MX (1 process, all plugins, stored in PostgreSQL before 250): accepted ${fmt(mailpath.perSecond)} msg/s; CPU per message ` +
        `${fmt(mailpath.serverMs!, 2)} ms (${mailpath.detail}), whole machine ${fmt(mailpath.machineMs, 2)} ms\n`,
    );
    const postfix = await benchPostfix();
    process.stdout.write(
      `  Postfix (queued to disk before 250, delivery held): accepted ${fmt(postfix.perSecond)} msg/s; CPU per message, whole machine ` +
        `${fmt(postfix.machineMs, 2)} ms; ${postfix.detail}\n`,
    );
    const ratio = mailpath.perSecond / postfix.perSecond;
    process.stdout.write(
      `  accepted msg/s vs Postfix: ${ratio.toFixed(2)}x (goal >= 1.00x, aim 1.50x): ${ratio >= 1.5 ? 'aim met' : ratio >= 1 ? 'goal met' : 'GOAL MISSED'}; ` +
        `load average after ${load()}\n`,
    );
  } finally {
    await sql.end();
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => {});
    await admin.end();
  }
}
