// The Debian packages the tests need beyond Node.js and PostgreSQL's binaries: real peers the tests talk to. `npm test`
// (test/run.mjs) installs the missing ones itself when it can (as root, with apt-get), else names them in one line and
// stops before running anything: a run without them would fail test by test, far from the cause.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** Each package with how to tell it is there. */
export const SYSTEM_PACKAGES = [
  // An independent DKIM verifier (dkimpy), which looks DNS up through dnspython.
  { name: 'python3-dkim', present: () => python('import dkim') },
  { name: 'python3-dnspython', present: () => python('import dns.resolver') },
  // The SMTP client the MX's protocol and open-relay tests drive.
  { name: 'swaks', present: () => onPath('swaks') },
  // The POP3 server of the bounce-mailbox tests.
  { name: 'dovecot-pop3d', present: () => existsSync('/usr/sbin/dovecot') && existsSync('/usr/lib/dovecot/pop3') },
  // pdftotext, which reads the audit PDF export back.
  { name: 'poppler-utils', present: () => onPath('pdftotext') },
  // The browser the dashboard's end-to-end tests drive (playwright-core, executablePath /usr/bin/chromium).
  { name: 'chromium', present: () => existsSync('/usr/bin/chromium') },
];

function python(code) {
  return spawnSync('/usr/bin/python3', ['-c', code], { stdio: 'ignore' }).status === 0;
}

function onPath(command) {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

const missing = () => SYSTEM_PACKAGES.filter((p) => !p.present()).map((p) => p.name);

/**
 * Installs what is missing when this process may (root, apt-get present); answers the packages still missing
 * afterwards (empty: all there). MAILPATH_TEST_NO_INSTALL=1 only checks.
 */
export function ensureSystemPackages() {
  const before = missing();
  if (before.length === 0) return [];
  const canInstall = process.getuid?.() === 0 && onPath('apt-get') && process.env.MAILPATH_TEST_NO_INSTALL !== '1';
  if (canInstall) {
    process.stdout.write(`npm test: installing ${before.join(' ')} (apt-get) ...\n`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () => spawnSync('apt-get', ['install', '-y', '-qq', ...before], { stdio: ['ignore', 'ignore', 'inherit'], env }).status === 0;
    if (!install()) {
      spawnSync('apt-get', ['update', '-qq'], { stdio: ['ignore', 'ignore', 'inherit'], env });
      install();
    }
  }
  return missing();
}
