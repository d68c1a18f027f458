// Benchmark: messages through POST /transactional/send and through SMTP submission, DKIM-signed and delivered to Postfix's smtp-sink, against Postfix
// relaying the same load to the same sink.
//
// Mailpath runs as it is deployed to use more than one core: two processes on one database, one
// with the api, submission and scheduler roles, one with the outbound role (built with `npm run
// build` first, run with plain node). Postfix is likewise several processes (smtpd, cleanup, qmgr, smtp).
//
// Goal: delivered/s end to end at least equal to Postfix's (same machine, same sink, same message size).
// Prints accepted/s (answers 202 / 250) and delivered/s (until the last send is marked delivered).
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides) and Postfix (../shared/bench/postfix-peer.sh
// installs it when missing); creates and drops a database of its own. BENCH_MESSAGES sets the count (default 20000).
import { cpus, loadavg } from 'node:os';
import autocannon from 'autocannon';
import nodemailer from 'nodemailer';
import { freePort } from '../test/helpers/net.js';
import { measuredCpu } from './lib/cpu.js';
import { postfixRelay, startDeployment } from './lib/deployment.js';
import { httpsJson } from './lib/http.js';
import { waitFor } from './lib/mailpath.js';
import { ensurePostfix, startSink } from './lib/postfix-peer.js';

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

export default async function runOutboundBench(): Promise<void> {
  await ensurePostfix();
  const sinkPort = await freePort();
  const stopSink = await startSink(sinkPort);
  const deployment = await startDeployment({
    name: 'outbound',
    frontRoles: 'api,submission,scheduler',
    sinkPort,
    extraPorts: ['MAILPATH_SUBMISSION_PORT', 'MAILPATH_SUBMISSION_TLS_PORT'],
    extraEnv: {
      MAILPATH_DB_POOL_SIZE: process.env['BENCH_POOL'] ?? '10',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '1000000000',
    },
  }).catch((err: unknown) => {
    stopSink();
    throw err;
  });
  const { sql, apiPort, front, outbound: delivery } = deployment;
  const submissionPort = deployment.ports['MAILPATH_SUBMISSION_PORT']!;
  try {
    const key = (await httpsJson(apiPort, 'POST', '/api/v1/api-keys', { name: 'bench' }, deployment.token)).data.key as string;
    const delivered = (source: string) => async () =>
      (await sql<{ n: number }[]>`select count(*)::int as n from sends where source = ${source} and status = 'delivered'`)[0]!.n;

    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    process.stdout.write(
      `outbound bench: ${fmt(MESSAGES)} messages of ~5 KB, DKIM rsa-2048, relay to Postfix smtp-sink; Mailpath as 2 processes (api+submission+scheduler, ` +
        `outbound); ${cpus().length} cores, load average ${load()}\n`,
    );
    const { result: api, perMessage: apiCpu } = await measuredCpu([front, delivery], MESSAGES, () =>
      viaApi(apiPort, key, 'hello@bench.test', delivered('api')),
    );
    process.stdout.write(
      `  Mailpath API (${API_CONNECTIONS} HTTPS connections): accepted ${fmt(api.acceptedPerSec)}/s, delivered ${fmt(api.deliveredPerSec)}/s; ${apiCpu}\n`,
    );
    const { result: smtp, perMessage: smtpCpu } = await measuredCpu([front, delivery], MESSAGES, () =>
      viaSubmission(submissionPort, key, 'hello@bench.test', delivered('smtp')),
    );
    process.stdout.write(
      `  Mailpath submission (${SMTP_CONNECTIONS} STARTTLS sessions): accepted ${fmt(smtp.acceptedPerSec)}/s, delivered ${fmt(smtp.deliveredPerSec)}/s; ` +
        `${smtpCpu}\n`,
    );
    await deployment.stopMailpath();
    const postfix = await postfixRelay(sinkPort, { messages: MESSAGES, bytes: 5120, sessions: SMTP_CONNECTIONS });
    const postfixMachine = postfix.machineMs;
    process.stdout.write(
      `  Postfix (smtp-source, ${SMTP_CONNECTIONS} sessions, relaying): accepted ${fmt(postfix.acceptedPerSec)}/s, delivered ` +
        `${fmt(postfix.deliveredPerSec)}/s; whole machine ${postfixMachine.toFixed(2)} ms CPU per message\n`,
    );
    const ratio = api.deliveredPerSec / postfix.deliveredPerSec;
    const smtpRatio = smtp.deliveredPerSec / postfix.deliveredPerSec;
    process.stdout.write(
      `  delivered/s vs Postfix: API ${ratio.toFixed(2)}x, submission ${smtpRatio.toFixed(2)}x (goal >= 1.00x): ` +
        `${ratio >= 1 && smtpRatio >= 1 ? 'goal met' : 'GOAL MISSED'}; load average after ${load()}\n`,
    );
  } finally {
    await deployment.close();
    stopSink();
  }
}
