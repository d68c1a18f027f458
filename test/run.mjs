// `npm test [-- tap options and test paths]`: compiles the TypeScript tree once with esbuild into .build/ (the same
// transform tsx applies, file by file, sources and tests alike), then runs tap over the compiled test files.
//
// Why: under tap every test file is a process of its own. Loaded through tsx, a file that builds the API spent about
// 1.4 s of CPU in tsx's resolve/load hooks before its first test, and each `mailpath start` a test spawns paid it again.
// Compiling the whole tree takes about 1.5 s once per run. Types are still checked by test/typecheck.test.ts.
//
// Test paths may be given as sources (test/api/x.test.ts, test/mta): they are mapped to their compiled files.
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { startTestPostgres } from './postgres-instance.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, '.build');
/** Every directory a test may import from (tests import sources, benches' helpers, clients' generators). */
const TREES = ['main', 'api', 'mta', 'plugins', 'shared', 'bench', 'clients', 'test'];

function walk(dir, into) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(path, into);
    } else into.push(path);
  }
  return into;
}

// Only code is compiled: tests and sources find their assets (config/, migrations, fixtures, the Python verifiers)
// from the project root (shared/paths.ts), so nothing else is copied.
const sources = TREES.flatMap((tree) => walk(join(ROOT, tree), [])).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));

rmSync(OUT, { recursive: true, force: true });
await build({
  entryPoints: sources,
  outdir: OUT,
  outbase: ROOT,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // tap runs the tests with --enable-source-maps: stack traces name the .ts lines.
  sourcemap: 'inline',
  logLevel: 'warning',
});

/** test/api/x.test.ts → .build/test/api/x.test.js; a directory under test/ → its compiled directory; options as given. */
function compiled(arg) {
  if (arg.startsWith('-')) return arg;
  const rel = relative(ROOT, resolve(arg));
  if (rel !== 'test' && !rel.startsWith(`test${sep}`)) return arg;
  return join(relative(process.cwd(), OUT), rel.replace(/\.ts$/, '.js'));
}

// tap compiles its Test class with the plugins .taprc names (`tap build`). A fresh `npm ci` brings the default set back,
// and tap's runner only rebuilds it after it has fixed the test processes' arguments: the whole first run after an
// install then loaded every test file through the TypeScript plugin's import hook (CI installs every time: its runs
// took 28.4 minutes of CPU against 23.7 for the same files without the hook, ~1.1 s per file). So the set is rebuilt
// here, before tap starts, when it still holds a plugin .taprc turns off.
function builtPluginsStale() {
  const excluded = [...readFileSync(join(ROOT, '.taprc'), 'utf8').matchAll(/^\s*-\s*"!([^"]+)"/gm)].map((m) => m[1]);
  let built;
  try {
    built = readFileSync(join(ROOT, 'node_modules', '@tapjs', 'test', 'test-built', 'dist', 'esm', 'index.js'), 'utf8');
  } catch {
    return false; // another tap layout: its runner's own rebuild applies
  }
  const signature = /export const signature = `([^`]*)`/.exec(built)?.[1] ?? '';
  const plugins = new Set(signature.split('\n').map((line) => line.trim()));
  return excluded.some((plugin) => plugins.has(plugin));
}
if (builtPluginsStale()) {
  const rebuilt = spawnSync(join(ROOT, 'node_modules', '.bin', 'tap'), ['build'], { stdio: 'inherit' });
  if (rebuilt.status !== 0) process.exit(rebuilt.status ?? 1);
}

// The database server: TEST_DATABASE_URL if given, else a throwaway server of this run's own (test/postgres-instance.mjs
// says why), else the machine's at 127.0.0.1:5432.
const env = { ...process.env };
let database = null;
if (!env.TEST_DATABASE_URL && env.MAILPATH_TEST_PG !== 'system') {
  database = await startTestPostgres();
  if (database) env.TEST_DATABASE_URL = database.url;
}

const tap = join(ROOT, 'node_modules', '.bin', 'tap');
const child = spawn(tap, process.argv.slice(2).map(compiled), { stdio: 'inherit', env });
// Ctrl-C reaches tap through the terminal; a signal sent to this process alone is passed on. Either way the server is
// stopped once tap has exited.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', async (code, signal) => {
  await database?.stop();
  process.exit(code ?? (signal ? 1 : 0));
});
