// Starts the real `mailpath dev` as a child process on free loopback ports, with a database of its own: what the
// dashboard's browser tests and the README walkthrough run against.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../shared/kernel/paths.js';
import { createTestDatabase } from './db.js';
import { freePort } from './net.js';
import type { TestLike } from './app.js';

export interface DevServer {
  /** https://127.0.0.1:<port> (self-signed certificate). */
  origin: string;
  /** The dev inbox and webhook receiver, http://127.0.0.1:<port>. */
  inbox: string;
  ports: Record<'https' | 'http' | 'mx' | 'submission' | 'submissionTls' | 'dns' | 'sink' | 'inbox', number>;
  databaseUrl: string;
  dataDir: string;
  /** What the process wrote to stderr so far, and the last of stdout. */
  stderr(): string;
  stdout(): string;
  /** Sends SIGTERM; answers the exit status, or 'timeout' after 30 s. */
  stop(): Promise<number | null | 'timeout'>;
}

/**
 * Only what a test must change: a database of its own, a data dir, free ports and quiet logs; every dev default
 * (loopback, host name, DNS servers, relay, webhook policy) is left to `mailpath dev`. `args` runs the command
 * (test/helpers/cli.ts: bundled or as shipped).
 */
export async function startDevServer(t: TestLike, args: string[], env: Record<string, string> = {}): Promise<DevServer> {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-dev-'));
  const ports = {
    https: await freePort(),
    http: await freePort(),
    mx: await freePort(),
    submission: await freePort(),
    submissionTls: await freePort(),
    dns: await freePort(),
    sink: await freePort(),
    inbox: await freePort(),
  };
  const child = spawn(process.execPath, args, {
    cwd: projectRoot(),
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DATABASE_URL: db.url,
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_HTTPS_PORT: String(ports.https),
      MAILPATH_HTTP_PORT: String(ports.http),
      // No operator port: an ephemeral one can be the very port a freePort() above handed out for another listener.
      MAILPATH_METRICS_PORT: 'off',
      MAILPATH_MX_PORT: String(ports.mx),
      MAILPATH_SUBMISSION_PORT: String(ports.submission),
      MAILPATH_SUBMISSION_TLS_PORT: String(ports.submissionTls),
      MAILPATH_DEV_DNS_PORT: String(ports.dns),
      MAILPATH_DEV_SMTP_PORT: String(ports.sink),
      MAILPATH_DEV_HTTP_PORT: String(ports.inbox),
      MAILPATH_ADMIN_PASSWORD: 'Root-password-123',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (stdout = (stdout + c.toString()).slice(-8000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  // Dev mode names the webhook receiver last, once everything listens.
  for (let i = 0; i < 240 && !stderr.includes('webhook receiver'); i++) {
    if (child.exitCode !== null) throw new Error(`mailpath dev exited with ${child.exitCode}:\n${stderr}\n${stdout}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!stderr.includes('webhook receiver')) throw new Error(`mailpath dev did not come up in 60 s:\n${stderr}\n${stdout}`);
  return {
    origin: `https://127.0.0.1:${ports.https}`,
    inbox: `http://127.0.0.1:${ports.inbox}`,
    ports,
    databaseUrl: db.url,
    dataDir,
    stderr: () => stderr,
    stdout: () => stdout,
    stop: () => {
      child.kill('SIGTERM');
      return Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 30_000))]);
    },
  };
}
