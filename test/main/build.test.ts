// `npm start` and `npm run dev` compile with esbuild (main/build.mjs), about a second for the whole service, instead of
// waiting on a full tsc compile (17 s idle, 70-100 s on a busy 2-core machine); the program it writes runs.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { projectRoot } from '../../shared/kernel/paths.js';

const run = promisify(execFile);
const ROOT = projectRoot();

function typescriptFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return typescriptFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

t.test('npm start and npm run dev compile with main/build.mjs, not tsc, then run the compiled command', async (t) => {
  const scripts = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as Record<string, string>;
  t.equal(scripts.start, 'node main/build.mjs && exec node dist/main/cli.js start');
  t.equal(scripts.dev, 'node main/build.mjs && exec node dist/main/cli.js dev');
  t.equal(
    scripts.build,
    'tsc -p tsconfig.build.json && node web/build.mjs',
    'npm run build (the image, the benches) stays the type-checked tsc build, and bundles the dashboard',
  );
});

t.test('main/build.mjs compiles every source tsc would into a runnable tree', { timeout: 120_000 }, async (t) => {
  // Inside the project, as dist/ is: the compiled program finds its root (config/, migrations) by walking up.
  mkdirSync(join(ROOT, '.build'), { recursive: true });
  const out = mkdtempSync(join(ROOT, '.build', 'build-test-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  const { stderr } = await run(process.execPath, [join(ROOT, 'main', 'build.mjs'), out], { cwd: ROOT, timeout: 100_000 });
  t.match(stderr, /^compiled \d+ files into .* in \d+ ms/, 'it says what it did');

  const trees = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')).include as string[];
  const sources = trees.flatMap((tree) => typescriptFiles(join(ROOT, tree)));
  t.ok(sources.length > 100, 'the service trees hold the sources');
  const missing = sources.map((f) => relative(ROOT, f).replace(/\.ts$/, '.js')).filter((f) => !existsSync(join(out, f)) || !existsSync(join(out, `${f}.map`)));
  t.same(missing, [], 'a .js and its source map for every .ts of tsconfig.build.json');

  // The compiled command runs: without a command it prints its usage and exits 64 (EX_USAGE).
  const usage = await run(process.execPath, [join(out, 'main', 'cli.js')], { cwd: ROOT, timeout: 30_000 }).then(
    () => ({ code: 0, stderr: '' }),
    (err: { code?: number; stderr?: string }) => ({ code: err.code, stderr: err.stderr ?? '' }),
  );
  t.equal(usage.code, 64, 'the compiled cli.js runs and answers a usage error');
  t.match(usage.stderr, /usage: mailpath <start\|dev\|migrate>/);
});
