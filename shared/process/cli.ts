#!/usr/bin/env node
// The `mailpath` command: `mailpath start` runs the configured roles until SIGTERM/SIGINT; `mailpath migrate` only migrates.
import { ConfigError, loadConfig } from '../config.js';
import { openDatabase } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createLogger } from '../log.js';
import { startMailpath } from './runtime.js';

const USAGE = 'usage: mailpath <start|migrate>';
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
    config = loadConfig();
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
  if (command !== 'start') {
    process.stderr.write(`${USAGE}\n`);
    return 64; // EX_USAGE
  }
  const running = await startMailpath(config, log);
  await new Promise<void>((resolve) => {
    let shuttingDown = false;
    const shutdown = (signal: string) => {
      if (shuttingDown) return;
      shuttingDown = true;
      log.info({ signal }, 'shutting down');
      const force = setTimeout(() => {
        log.error('graceful shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs + 5000);
      force.unref();
      void running.stop().then(resolve);
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
    watchLauncher(config.launchedByNpm, () => shutdown('launcher exited'));
  });
  return 0;
}

main(process.argv[2]).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`mailpath: fatal: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
