// A real POP3 server for tests: Debian's dovecot-pop3d on a free loopback port (plain and implicit TLS), its own config, users and Maildirs in a temp dir.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './net.js';

export interface Dovecot {
  port: number;
  tlsPort: number;
  /** The PEM certificate the TLS listener presents (self-signed, for localhost). */
  certificate: string;
  /** Puts a message in the user's maildrop (as the delivery agent would). */
  deliver(user: string, raw: string | Buffer): void;
  /** Messages still in the user's maildrop (new and seen). */
  count(user: string): number;
  stop(): Promise<void>;
}

// Mail files belong to an unprivileged user: dovecot refuses to access mail as root.
const MAIL_UID = 65534;
const MAIL_GID = 65534;

function requireDovecot(): string {
  for (const path of ['/usr/sbin/dovecot', '/usr/bin/dovecot']) if (existsSync(path)) return path;
  throw new Error('dovecot is not installed: apt-get install dovecot-pop3d (the bounce-mailbox tests need a real POP3 server)');
}

let delivered = 0;

/** Starts dovecot with `users` (name → password) and stops it at teardown. */
export async function startDovecot(t: { teardown(fn: () => unknown): void }, users: Record<string, string>): Promise<Dovecot> {
  const binary = requireDovecot();
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-dovecot-'));
  // Dovecot's auth process runs as the dovecot user and must read the password file.
  chmodSync(dir, 0o755);
  const [port, tlsPort] = [await freePort(), await freePort()];
  const [cert, key] = [join(dir, 'cert.pem'), join(dir, 'key.pem')];
  // An EC key: made at once (an RSA key generated in JavaScript takes seconds on a loaded machine).
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-subj',
      '/CN=localhost',
      '-days',
      '2',
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  writeFileSync(
    join(dir, 'passwd'),
    Object.entries(users)
      .map(([u, p]) => `${u}:{PLAIN}${p}::::::\n`)
      .join(''),
  );
  const home = (user: string) => join(dir, 'home', user);
  for (const user of Object.keys(users)) {
    for (const sub of ['new', 'cur', 'tmp']) mkdirSync(join(home(user), 'Maildir', sub), { recursive: true });
  }
  execFileSync('chown', ['-R', `${MAIL_UID}:${MAIL_GID}`, join(dir, 'home')]);
  const conf = join(dir, 'dovecot.conf');
  writeFileSync(
    conf,
    `base_dir = ${dir}/run
state_dir = ${dir}/run
log_path = ${dir}/dovecot.log
protocols = pop3
listen = 127.0.0.1
ssl = yes
ssl_cert = <${cert}
ssl_key = <${key}
disable_plaintext_auth = no
auth_mechanisms = plain
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd
}
userdb {
  driver = static
  args = uid=${MAIL_UID} gid=${MAIL_GID} home=${dir}/home/%u
}
mail_location = maildir:~/Maildir
pop3_uidl_format = %08Xu%08Xv
service pop3-login {
  chroot =
  inet_listener pop3 {
    port = ${port}
  }
  inet_listener pop3s {
    port = ${tlsPort}
    ssl = yes
  }
}
service anvil {
  chroot =
}
`,
  );
  // The master forks into the background: its output goes to a file, since a pipe would be held open by the
  // daemon and keep spawnSync waiting.
  const started = spawnSync(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'ignore'] });
  if (started.status !== 0) throw new Error(`dovecot did not start (exit ${started.status}); see ${dir}/dovecot.log: ${readLog(dir)}`);
  // A clean stop (`dovecot stop`, or SIGTERM to the master) takes 3 s here while the master waits for its children:
  // this instance holds nothing worth a clean stop, so its whole process group (the daemonized master leads one) is
  // killed at once.
  const stop = async () => {
    killGroupOf(join(dir, 'run', 'master.pid'));
    rmSync(dir, { recursive: true, force: true });
  };
  t.teardown(stop);
  await waitForListener(port);
  return {
    port,
    tlsPort,
    certificate: readFileSync(cert, 'utf8'),
    deliver(user, raw) {
      delivered++;
      const name = `${Date.now()}.M${delivered}P${process.pid}.mailpath-test`;
      const tmp = join(home(user), 'Maildir', 'tmp', name);
      writeFileSync(tmp, raw);
      chownSync(tmp, MAIL_UID, MAIL_GID);
      execFileSync('mv', [tmp, join(home(user), 'Maildir', 'new', name)]);
    },
    count(user) {
      return ['new', 'cur'].reduce((n, sub) => n + readdirSync(join(home(user), 'Maildir', sub)).length, 0);
    },
    stop,
  };
}

/** SIGKILL to the process group led by the pid in `pidFile` (no pid file, or the group gone already: nothing to do, and the directory is still removed). */
function killGroupOf(pidFile: string): void {
  try {
    const leader = Number(readFileSync(pidFile, 'utf8').trim());
    if (leader > 0) process.kill(-leader, 'SIGKILL');
  } catch {
    // The master never wrote its pid, or its group has exited.
  }
}

function readLog(dir: string): string {
  try {
    return readFileSync(join(dir, 'dovecot.log'), 'utf8').slice(-2000);
  } catch {
    return '(no log)';
  }
}

/** Dovecot forks its listeners after the master returns: wait (bounded) until the port answers. */
async function waitForListener(port: number): Promise<void> {
  const { connect } = await import('node:net');
  for (let attempt = 0; attempt < 100; attempt++) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('data', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`dovecot did not listen on 127.0.0.1:${port}`);
}
