#!/usr/bin/env node
// The `mailpath` command: `mailpath start` runs the configured roles until SIGTERM/SIGINT; `mailpath dev` does so on one machine with a loopback DNS, mail
// sink and inbox (main/dev/); `mailpath migrate` only migrates.
import { ConfigError } from '../shared/config/index.js';
import { loadMailpathConfig } from './config.js';
import { openDatabase } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/kernel/log.js';
import { startDev } from './dev/start.js';
import { startMailpath } from './runtime.js';
import { describeFatal } from './startup-errors.js';

const USAGE = 'usage: mailpath <start|dev|migrate>';
/** Taken before start-up: a launcher that dies while the roles start must still be noticed. */
const LAUNCHER_PID = process.ppid;

/**
 * Under `npm start` this process runs below npm and a shell. Stopping npm with SIGTERM kills that shell,
 * which does not pass the signal on: instead of running on as an orphan (holding the ports and the data
 * dir), shut down as on SIGTERM once the parent is gone.
 */
function watchLauncher(launchedByNpm: boolean, onGone: () => void): void {
  if (!launchedByNpm) return;
  if (process.ppid !== LAUNCHER_PID) {
    onGone();
    return;
  }
  const timer = setInterval(() => {
    if (process.ppid === LAUNCHER_PID) return;
    clearInterval(timer);
    onGone();
  }, 1000);
  timer.unref();
}

async function main(command: string | undefined): Promise<number> {
  let config;
  try {
    config = loadMailpathConfig(undefined, { dev: command === 'dev' });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`mailpath: ${err.message}\n`);
      return 78; // EX_CONFIG
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  if (command === 'migrate') {
    const db = await openDatabase(config, log);
    const applied = await migrate(db.sql);
    log.info({ applied }, 'migrations done');
    await db.close();
    return 0;
  }
  if (command !== 'start' && command !== 'dev') {
    process.stderr.write(`${USAGE}\n`);
    return 64; // EX_USAGE
  }
  // Signals are taken from the start: one that arrives while the roles are still starting must stop
  // them once they are up, not kill the process half-started (the default action of SIGTERM).
  let stopRequested: ((signal: string) => void) | undefined;
  const requested = new Promise<string>((resolve) => (stopRequested = resolve));
  process.once('SIGTERM', () => stopRequested!('SIGTERM'));
  process.once('SIGINT', () => stopRequested!('SIGINT'));
  watchLauncher(config.launchedByNpm, () => stopRequested!('launcher exited'));
  const running = command === 'dev' ? await startDev(config, log) : await startMailpath(config, log);
  const signal = await requested;
  log.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    log.error('graceful shutdown timed out; exiting');
    process.exit(1);
  }, config.shutdownTimeoutMs + 5000);
  force.unref();
  await running.stop();
  return 0;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const report = describeFatal(err);
    process.stderr.write(report.text);
    process.exit(report.status);
  },
);
