// Runs every benchmark in bench/ (each file default-exports an async function that prints its figures), one child process each.
//
//   npm run bench            every bench
//   npm run bench -- api     only bench/api.ts
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

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

function spawnOne(name: string): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', name], { stdio: 'inherit' });
    const timeoutMs = benchTimeoutMs(name);
    const timer = setTimeout(() => {
      process.stderr.write(`bench ${name}: timed out after ${timeoutMs / 1000} s\n`);
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
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
    const code = await spawnOne(name);
    if (code !== 0) {
      failed++;
      process.stderr.write(`bench ${name} failed (exit ${code})\n`);
    }
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
