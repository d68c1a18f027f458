// Benchmark: messages through POST /transactional/send and through SMTP submission, DKIM-signed and delivered to Postfix's smtp-sink, against Postfix relaying the same load to the same sink.
//
// Mailpath runs as it is deployed to use more than one core: two processes on one database, one
// with the api, submission and scheduler roles, one with the outbound role (built with `npm run
// build` first, run with plain node). Postfix is likewise several processes (smtpd, cleanup, qmgr, smtp).
//
// Goal: delivered/s end to end at least equal to Postfix's (same machine, same sink, same message size).
// Prints accepted/s (answers 202 / 250) and delivered/s (until the last send is marked delivered).
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides) and Postfix (../shared/bench/postfix-peer.sh
// installs it when missing); creates and drops a database of its own. BENCH_MESSAGES sets the count (default 20000).
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import postgres from 'postgres';
import { generateDkimKey, storeKey } from '../shared/domains/dkim-keys.js';
import { projectRoot } from '../shared/paths.js';
import { SealedBox } from '../shared/secrets/sealed-box.js';
import { machineBusySeconds, measuredCpu } from './lib/cpu.js';
import { httpsJson } from './lib/http.js';
import { freePort } from '../test/helpers/net.js';
import { startProcess, waitFor } from './lib/mailpath.js';
import { ensurePostfix, postfixQueued, startPostfix, startSink, stopPostfix } from './lib/postfix-peer.js';
import { SMTP_SOURCE } from './lib/smtp-load.js';

const run = promisify(execFile);
const ADMIN_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MESSAGES = Math.max(100, Number(process.env['BENCH_MESSAGES'] ?? 20_000));
const API_CONNECTIONS = 50;
const SMTP_CONNECTIONS = 20;
const BODY = 'x'.repeat(76).concat('\n').repeat(64); // ~5 KB, as smtp-source -l 5120
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

interface Figures {
  acceptedPerSec: number;
  deliveredPerSec: number;
}

async function viaApi(port: number, key: string, from: string, delivered: () => Promise<number>): Promise<Figures> {
  const started = performance.now();
  const result = await autocannon({
    url: `https://127.0.0.1:${port}/api/v1/transactional/send`,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ to: 'sink@bench-dest.test', from_email: from, subject: 'Bench', body_text: BODY }),
    connections: API_CONNECTIONS,
    amount: MESSAGES,
    workers: 1,
  });
  const acceptedAt = performance.now();
  if (result.non2xx > 0 || result.errors > 0) throw new Error(`API: ${result.non2xx} non-2xx answers, ${result.errors} errors`);
  const doneAt = await waitFor(delivered, MESSAGES, 'API sends delivered');
  return { acceptedPerSec: MESSAGES / ((acceptedAt - started) / 1000), deliveredPerSec: MESSAGES / ((doneAt - started) / 1000) };
}

async function viaSubmission(port: number, key: string, from: string, delivered: () => Promise<number>): Promise<Figures> {
  const transport = nodemailer.createTransport({
    pool: true,
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    maxConnections: SMTP_CONNECTIONS,
    maxMessages: Infinity,
    tls: { rejectUnauthorized: false },
    auth: { user: 'bench', pass: key },
  });
  const started = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < MESSAGES) {
      next++;
      await transport.sendMail({ from, to: 'sink@bench-dest.test', subject: 'Bench', text: BODY });
    }
  };
  await Promise.all(Array.from({ length: SMTP_CONNECTIONS * 4 }, worker));
  const acceptedAt = performance.now();
  transport.close();
  const doneAt = await waitFor(delivered, MESSAGES, 'submitted sends delivered');
  return { acceptedPerSec: MESSAGES / ((acceptedAt - started) / 1000), deliveredPerSec: MESSAGES / ((doneAt - started) / 1000) };
}

/** Postfix accepting from smtp-source (20 sessions, 5 KB) and relaying to the same sink; delivered when its queue is empty. */
async function viaPostfix(sinkPort: number): Promise<Figures> {
  const listen = await freePort();
  await startPostfix(listen, sinkPort);
  try {
    const started = performance.now();
    await run(SMTP_SOURCE, ['-4', '-s', String(SMTP_CONNECTIONS), '-m', String(MESSAGES), '-l', '5120', '-f', 'a@example.test', '-t', 'b@example.test', `127.0.0.1:${listen}`], { maxBuffer: 1 << 24 });
    const acceptedAt = performance.now();
    const doneAt = await waitFor(async () => MESSAGES - (await postfixQueued()), MESSAGES, 'Postfix queue drained');
    return { acceptedPerSec: MESSAGES / ((acceptedAt - started) / 1000), deliveredPerSec: MESSAGES / ((doneAt - started) / 1000) };
  } finally {
    await stopPostfix();
  }
}

export default async function runOutboundBench(): Promise<void> {
  await ensurePostfix();
  const sinkPort = await freePort();
  const stopSink = await startSink(sinkPort);
  const dbName = `mailpath_bench_${randomBytes(5).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-bench-'));
  const masterKey = randomBytes(32).toString('hex');
  await admin.unsafe(`create database "${dbName}"`);
  const sql = postgres(dbUrl.toString(), { max: 2, onnotice: () => {} });
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const [apiPort, httpPort, submissionPort, submissionTlsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DATABASE_URL: dbUrl.toString(),
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: String(apiPort),
      MAILPATH_HTTP_PORT: String(httpPort),
      MAILPATH_METRICS_PORT: '0',
      MAILPATH_SUBMISSION_PORT: String(submissionPort),
      MAILPATH_SUBMISSION_TLS_PORT: String(submissionTlsPort),
      MAILPATH_OUTBOUND_RELAY: `127.0.0.1:${sinkPort}`,
      MAILPATH_MASTER_KEY: masterKey,
      MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_DB_POOL_SIZE: process.env['BENCH_POOL'] ?? '10',
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '1000000000',
      MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[10000000]',
    };
    process.stdout.write('outbound bench: building (npm run build) ...\n');
    await run('npm', ['run', 'build'], { cwd: projectRoot() });
    const front = await startProcess({ ...env, MAILPATH_ROLES: 'api,submission,scheduler' }, apiPort);
    cleanups.push(() => front.stop());
    const delivery = await startProcess({ ...env, MAILPATH_ROLES: 'outbound', MAILPATH_DATA_DIR: join(dataDir, 'outbound') }, undefined);
    cleanups.push(() => delivery.stop());

    const register = await httpsJson(apiPort, 'POST', '/api/v1/auth/register', { tenant_name: 'Bench', tenant_slug: 'bench', email: 'owner@bench.test', password: 'Correct-horse-42' });
    const tenantId = register.data.tenant_id as string;
    const key = (await httpsJson(apiPort, 'POST', '/api/v1/api-keys', { name: 'bench' }, register.data.token)).data.key as string;
    await sql`insert into plans (id, name, monthly_send_cap) values ('bench', 'Bench', 1000000000)`;
    await sql`update tenants set plan_id = 'bench' where id = ${tenantId}`;
    const [domain] = await sql<{ id: string }[]>`
      insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at) values (${tenantId}, 'bench.test', 'bench.test', now(), now(), now()) returning id`;
    const vault = new SealedBox(Buffer.from(masterKey, 'hex'));
    await storeKey(sql, vault, { tenantId, domainId: domain!.id, selector: 'bench', key: await generateDkimKey(2048), state: 'active', at: new Date() });
    const delivered = (source: string) => async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from sends where source = ${source} and status = 'delivered'`)[0]!.n;

    const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
    process.stdout.write(`outbound bench: ${fmt(MESSAGES)} messages of ~5 KB, DKIM rsa-2048, relay to Postfix smtp-sink; Mailpath as 2 processes (api+submission+scheduler, outbound); ${cpus().length} cores, load average ${load()}\n`);
    const { result: api, perMessage: apiCpu } = await measuredCpu([front, delivery], MESSAGES, () => viaApi(apiPort, key, 'hello@bench.test', delivered('api')));
    process.stdout.write(`  Mailpath API (${API_CONNECTIONS} HTTPS connections): accepted ${fmt(api.acceptedPerSec)}/s, delivered ${fmt(api.deliveredPerSec)}/s; ${apiCpu}\n`);
    const { result: smtp, perMessage: smtpCpu } = await measuredCpu([front, delivery], MESSAGES, () => viaSubmission(submissionPort, key, 'hello@bench.test', delivered('smtp')));
    process.stdout.write(`  Mailpath submission (${SMTP_CONNECTIONS} STARTTLS sessions): accepted ${fmt(smtp.acceptedPerSec)}/s, delivered ${fmt(smtp.deliveredPerSec)}/s; ${smtpCpu}\n`);
    await front.stop();
    await delivery.stop();
    const machineBefore = machineBusySeconds();
    const postfix = await viaPostfix(sinkPort);
    const postfixMachine = ((machineBusySeconds() - machineBefore) * 1000) / MESSAGES;
    process.stdout.write(
      `  Postfix (smtp-source, ${SMTP_CONNECTIONS} sessions, relaying): accepted ${fmt(postfix.acceptedPerSec)}/s, delivered ${fmt(postfix.deliveredPerSec)}/s; whole machine ${postfixMachine.toFixed(2)} ms CPU per message\n`,
    );
    const ratio = api.deliveredPerSec / postfix.deliveredPerSec;
    const smtpRatio = smtp.deliveredPerSec / postfix.deliveredPerSec;
    process.stdout.write(
      `  delivered/s vs Postfix: API ${ratio.toFixed(2)}x, submission ${smtpRatio.toFixed(2)}x (goal >= 1.00x): ${ratio >= 1 && smtpRatio >= 1 ? 'goal met' : 'GOAL MISSED'}; load average after ${load()}\n`,
    );
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => {});
    await sql.end();
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => {});
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
    stopSink();
  }
}
