// `npm test [-- tap options and test paths]`: compiles the TypeScript tree once with esbuild into .build/ (the same
// transform tsx applies, file by file, sources and tests alike: main/build.mjs, which `npm start` compiles dist/ with),
// then runs tap over the compiled test files.
//
// Why: under tap every test file is a process of its own. Loaded through tsx, a file that builds the API spent about
// 1.4 s of CPU in tsx's resolve/load hooks before its first test, and each `mailpath start` a test spawns paid it again.
// Compiling the whole tree takes about 1.5 s once per run. Types are still checked by test/typecheck.test.ts.
//
// Test paths may be given as sources (test/api/x.test.ts, test/mta): they are mapped to their compiled files.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { compileTree, ROOT, typescriptSources } from '../main/build.mjs';
import { startTestPostgres } from './postgres-instance.mjs';
import { ensureSystemPackages } from './system-packages.mjs';
import { buildWeb } from '../web/build.mjs';

const OUT = join(ROOT, '.build');
/** Every directory a test may import from (tests import sources, benches' helpers, clients' generators). */
const TREES = ['main', 'api', 'mta', 'plugins', 'jobs', 'shared', 'bench', 'clients', 'test'];

// Only code is compiled: tests and sources find their assets (config/, migrations, fixtures, the Python verifiers)
// from the project root (shared/kernel/paths.ts), so nothing else is copied.
const sources = typescriptSources(TREES);

// The Debian packages the tests' real peers come from (test/system-packages.mjs): installed here when root can, else
// named in one line before anything runs.
const missingPackages = ensureSystemPackages();
if (missingPackages.length > 0) {
  process.stderr.write(`npm test needs these Debian packages: sudo apt-get install -y ${missingPackages.join(' ')}\n`);
  process.exit(1);
}

rmSync(OUT, { recursive: true, force: true });
// tap runs the tests with --enable-source-maps: stack traces name the .ts lines.
await compileTree(sources, OUT, { sourcemap: 'inline' });
// The dashboard, where the API serving it from the compiled tree looks (api/pages/web-app.ts): .build/web.
await buildWeb(join(OUT, 'web'));

// The whole suite runs bundled: each test process loads its entry and the chunks it shares with the others
// (.build/bundled/) instead of the ~1,500 modules of the compiled tree and node_modules, one by one, each seen by tap's
// process-info hook. Measured on test/api/routes/campaigns.test as tap runs it: 6.6 s of CPU per-file, 3.9 s bundled (with the
// process-info exclusion in .taprc); about two thirds of a test process's CPU was loading modules. Without source
// maps: Node (tap always passes --enable-source-maps) parses a module's map as it loads it, and the bundle's maps,
// node_modules' code included, made a process slower than the per-file tree. So a run given test paths (someone
// reading a failure) runs the per-file tree, whose stack traces name the .ts lines; so does MAILPATH_TEST_UNBUNDLED=1.
// What a test starts in a thread of its own (the recorder thread) runs the per-file tree, as deployed; the `mailpath`
// processes tests start run the bundled command (below), but for the tests of the command itself (test/helpers/cli.ts).
// Every `import.meta.url` in our sources is replaced by the URL of the file's per-file compiled copy, so paths found
// from it (the project root, .build/main/cli.js, the worker's own module) are what they are unbundled.
// Packages that find files next to themselves (__dirname, require.resolve), native or WebAssembly ones, the test
// tooling, piscina (it finds its worker file beside itself), smtp-server (a test fingerprints the source of the
// internals the MX relies on, which a bundler re-prints) and standardwebhooks (a test imports it with import(), which
// esbuild answers without the named exports Node finds in a CommonJS package) stay outside the bundle and load from
// node_modules.
const BUNDLED = join(OUT, 'bundled');
// tap starts the files in name order, three at a time: a long file named late (test/typecheck.test) starts late, and
// the run then waits for it with the other slots idle. The longest files of a whole run (50 s or more each) are
// bundled under test/0-first/, which sorts first, so they start at once and the short ones fill the slots around them.
const LONG_POLES = [
  'typecheck',
  'scenarios/smoke/start',
  'main/startup-errors',
  'scenarios/audiences/import-crash',
  'scenarios/campaigns/processes',
  'scenarios/campaigns/crash',
  'shared/db/embedded',
  'shared/delivery/bounce-mailboxes/poller',
  'shared/audiences/segments/compile',
  'jobs/event-webhooks/worker',
  'shared/audiences/segments/compile.random',
  'scenarios/inbound/durability',
].map((name) => join('test', `${name}.test.ts`));
/** A test file's bundled name, without .js, under .build/bundled/: its own path, or under test/0-first/ for a long pole. */
function bundledName(rel) {
  const name = rel.replace(/\.ts$/, '');
  return LONG_POLES.includes(rel) ? join('test', '0-first', relative('test', name)) : name;
}
const UNBUNDLED_PACKAGES = [
  'bcrypt',
  'pdfkit',
  'fontkit',
  '@electric-sql/*',
  'tap',
  '@tapjs/*',
  'esbuild',
  'typescript',
  'thread-stream',
  'pino',
  '@fastify/swagger',
  '@fastify/swagger-ui',
  'undici',
  'liquidjs',
  '@redocly/openapi-core',
  'mailauth',
  'smtp-server',
  'standardwebhooks',
  'piscina',
  // Reads its own package.json through __dirname, which an ES module bundle does not have.
  'playwright-core',
  'axe-core',
];
// A test path is an argument naming a file or directory that exists, or a .ts file (tap then says it is missing): an
// option's value given apart (`--grep foo`) is not one.
const testPaths = process.argv.slice(2).filter((a) => !a.startsWith('-') && (existsSync(a) || a.endsWith('.ts')));
// MAILPATH_TEST_BUNDLED=1 runs given test paths bundled too (a failure that only the whole-suite run shows).
const bundled = process.env.MAILPATH_TEST_UNBUNDLED !== '1' && (testPaths.length === 0 || process.env.MAILPATH_TEST_BUNDLED === '1');
if (bundled) {
  await build({
    // The `mailpath` command too: the processes tests start (test/helpers/cli.ts) load it bundled, for the same reason.
    entryPoints: [
      ...sources.filter((f) => f.startsWith(join(ROOT, 'test') + sep) && f.endsWith('.test.ts')).map((f) => ({ in: f, out: bundledName(relative(ROOT, f)) })),
      { in: join(ROOT, 'main', 'cli.ts'), out: join('main', 'cli') },
    ],
    outdir: BUNDLED,
    bundle: true,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: false, // see above
    logLevel: 'warning',
    external: UNBUNDLED_PACKAGES,
    // CommonJS packages in an ES module bundle call `require`.
    banner: { js: "import { createRequire as __mailpathCreateRequire } from 'node:module'; const require = __mailpathCreateRequire(import.meta.url);" },
    plugins: [
      {
        name: 'per-file-import-meta-url',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, (args) => {
            if (args.path.includes(`${sep}node_modules${sep}`)) return undefined;
            const copy = pathToFileURL(join(OUT, relative(ROOT, args.path)).replace(/\.ts$/, '.js')).href;
            return { contents: readFileSync(args.path, 'utf8').replaceAll('import.meta.url', JSON.stringify(copy)), loader: 'ts' };
          });
        },
      },
    ],
  });
}

/** test/api/x.test.ts → .build/bundled/test/api/x.test.js (or .build/test/… unbundled); a directory under test/ → its compiled directory; options as given. */
function compiled(arg) {
  if (arg.startsWith('-')) return arg;
  const rel = relative(ROOT, resolve(arg));
  if (rel !== 'test' && !rel.startsWith(`test${sep}`)) return arg;
  if (bundled && rel.endsWith('.ts')) return join(relative(process.cwd(), BUNDLED), `${bundledName(rel)}.js`);
  return join(relative(process.cwd(), bundled ? BUNDLED : OUT), rel.replace(/\.ts$/, '.js'));
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

// Tests start `mailpath` from the bundle too (test/helpers/cli.ts): each such process loaded the per-file tree's
// ~1,500 modules, every one of them also passed through the process-info hook tap puts in every child's NODE_OPTIONS.
if (bundled) env.MAILPATH_TEST_CLI = join(BUNDLED, 'main', 'cli.js');

const tap = join(ROOT, 'node_modules', '.bin', 'tap');
const args = process.argv.slice(2).map(compiled);
// Without test paths: every test file of the tree that runs (.taprc's include matches both trees).
if (testPaths.length === 0) args.push(compiled('test'));
const child = spawn(tap, args, { stdio: 'inherit', env });
// Ctrl-C reaches tap through the terminal; a signal sent to this process alone is passed on. Either way the server is
// stopped once tap has exited.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
child.on('exit', async (code, signal) => {
  await database?.stop();
  process.exit(code ?? (signal ? 1 : 0));
});
