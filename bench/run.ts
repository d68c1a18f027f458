// Runs every benchmark in bench/ (each file default-exports an async function that prints its figures), one child process each.
//
//   npm run bench            every bench
//   npm run bench -- api     only bench/api.ts
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import postgres from 'postgres';
import { ADMIN_URL, BENCH_DATABASE_PREFIX } from './lib/bench-database.js';
import { stopPostfix } from './lib/postfix-peer.js';

const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
/**
 * Upper bound for one bench, so a hung bench cannot hang the run (BENCH_TIMEOUT_S raises it for big data sets). The
 * campaign bench gets 30 minutes by default: on a machine where Postfix relays 230 messages/s (2026-11-29's), its
 * 100,000-message peer alone takes 7 minutes after Mailpath's run, and 10 minutes killed it before it printed. The
 * analytics bench too: generating its 10,000,000 events and filling the rollups from empty take about 10 minutes
 * before its first query (a kill leaves its database behind: the bench cannot clean up after SIGKILL).
 */
const DEFAULT_TIMEOUT_S: Record<string, number> = { campaign: 1800, analytics: 1800 };
const benchTimeoutMs = (name: string) => Math.max(60, Number(process.env['BENCH_TIMEOUT_S'] ?? DEFAULT_TIMEOUT_S[name] ?? 600) || 600) * 1000;

function benchNames(): string[] {
  return readdirSync(BENCH_DIR)
    .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
}

/** In the child: import the bench and run its default export. */
async function runOne(name: string): Promise<void> {
  const mod = (await import(pathToFileURL(join(BENCH_DIR, `${name}.ts`)).href)) as { default?: () => Promise<unknown> };
  if (typeof mod.default !== 'function') throw new Error(`bench/${name}.ts has no default-exported function`);
  await mod.default();
}

/** Set once Ctrl-C or a signal reached the runner: the bench running is stopped, and no other starts. */
let interrupted = false;
/** The signals the runner passes on to the bench's process group. */
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Runs one bench in a process group of its own: a timeout kills the whole group, so the Mailpath processes, load
 * generators and sinks the bench started go with it (a kill of the bench process alone left them running), and what
 * lives outside the group is cleaned up after it (afterKill). Signals the runner gets are passed on to the group.
 */
function spawnOne(name: string): Promise<{ code: number; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name], { stdio: 'inherit', detached: true });
    const group = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // the group is gone already
      }
    };
    let killed = false;
    const timeoutMs = benchTimeoutMs(name);
    const timer = setTimeout(() => {
      process.stderr.write(`bench ${name}: timed out after ${timeoutMs / 1000} s\n`);
      killed = true;
      group('SIGKILL');
    }, timeoutMs);
    const forward = (signal: NodeJS.Signals) => {
      interrupted = true;
      killed = true;
      group(signal);
    };
    for (const signal of STOP_SIGNALS) process.on(signal, forward);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      for (const signal of STOP_SIGNALS) process.off(signal, forward);
      // What the bench started and has not ended (a sink, a load generator) goes too.
      group('SIGKILL');
      resolve({ code: code ?? (signal ? 1 : 0), killed });
    });
  });
}

/**
 * After a bench was killed, what it could not clean up: the Postfix peer (a daemon outside the process group) and its
 * database (every bench names it with BENCH_DATABASE_PREFIX), once nobody is connected to it: benches run one at a time, so
 * the databases left then are this one's or older leftovers.
 */
async function afterKill(): Promise<void> {
  await stopPostfix();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    for (let attempt = 0; attempt < 20; attempt++) {
      const [busy] = await admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where starts_with(datname, ${BENCH_DATABASE_PREFIX})`;
      if (busy!.n === 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const left = await admin<{ datname: string }[]>`
      select datname from pg_database d where starts_with(datname, ${BENCH_DATABASE_PREFIX})
        and not exists (select 1 from pg_stat_activity a where a.datid = d.oid)`;
    for (const { datname } of left) {
      await admin.unsafe(`drop database if exists "${datname}"`);
      process.stderr.write(`bench: dropped ${datname}, left by the killed bench\n`);
    }
  } catch (err) {
    process.stderr.write(`bench: could not drop the killed bench's database: ${err instanceof Error ? err.message : String(err)}\n`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}

async function main(args: string[]): Promise<number> {
  if (args[0] === '--child') {
    await runOne(args[1]!);
    return 0;
  }
  const all = benchNames();
  const wanted = args.length > 0 ? args : all;
  const unknown = wanted.filter((n) => !all.includes(n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown bench: ${unknown.join(', ')} (have: ${all.join(', ')})\n`);
    return 64;
  }
  let failed = 0;
  for (const name of wanted) {
    process.stdout.write(`\n== bench/${name}.ts ==\n`);
    const { code, killed } = await spawnOne(name);
    if (killed) await afterKill();
    if (code !== 0) {
      failed++;
      process.stderr.write(`bench ${name} failed (exit ${code})\n`);
    }
    if (interrupted) return 130;
  }
  return failed > 0 ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
