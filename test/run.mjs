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
// Test files that share a process. Under tap each file is a process of its own, and most of a short file's CPU went to
// what every process repeats: tap's hooks, loading the bundle, and V8 compiling the same code cold (measured on ten
// files of test/api/routes run one after another: 49.4 s of CPU as ten processes, 17.6 s in one). So the whole-suite
// run puts files that can share a process into groups of GROUP_SIZE, run one after another in one process (the file
// itself still runs as written: its teardowns run when its own subtests have ended, before the next file starts).
// A file keeps a process of its own when it is a long pole, a whole-tree check, a scenario or a test of main/ (they
// start processes of their own: sharing saves them little), or when it touches what is one per process (root hooks,
// the environment, signal handlers, process-wide DNS or HTTP settings): PROCESS_STATE finds those in its source.
const GROUP_SIZE = 8;
const PROCESS_STATE = new RegExp(
  [
    String.raw`^t\.(before|beforeEach|afterEach|after|end|plan|setTimeout|jobs)\(`,
    String.raw`process\.env(\.|\[)[A-Za-z_'"]+\]? *=[^=]`,
    String.raw`delete process\.env`,
    String.raw`process\.(on|once)\(|process\.exit|process\.chdir|process\.argv\[1\]`,
    'setServers|setDefaultResultOrder|setGlobalDispatcher',
    String.raw`Date\.now *=|globalThis\.[a-zA-Z]+ *=[^=]`,
    'getActiveResourcesInfo|_getActiveHandles|memoryUsage',
  ].join('|'),
  'm',
);
/** Whether a test file (its path relative to the project root) runs in a process of its own in the whole-suite run. */
function ownProcess(rel, source) {
  const parts = rel.split(sep);
  if (LONG_POLES.includes(rel) || parts.length === 2 || ['scenarios', 'main'].includes(parts[1])) return true;
  return PROCESS_STATE.test(source);
}

/** The code of a group's entry: each file imported in turn, its root teardowns run once its own subtests have ended. */
function groupEntry(files) {
  const list = files.map((f) => `[${JSON.stringify(relative(ROOT, f).split(sep).join('/'))}, () => import(${JSON.stringify(f)})]`).join(',\n  ');
  return `import t from 'tap';
const files = [
  ${list},
];
for (const [name, load] of files) {
  const teardowns = [];
  const collect = (fn) => void teardowns.push(fn);
  // An own property of the root object, in front of tap's plugin proxy (an assignment would go through to the proxy).
  Object.defineProperty(t, 'teardown', { value: collect, configurable: true, writable: true });
  if (t.teardown !== collect) throw new Error('tap no longer lets a group collect the root teardowns of a file');
  t.comment('file ' + name);
  try {
    await load();
    // Queued after every subtest the file queued, so it resolves once they have all ended.
    await t.test(name + ': its subtests ended', async () => {});
  } catch (err) {
    t.fail(name + ' failed to load: ' + (err?.stack ?? err));
  } finally {
    delete t.teardown;
    for (const fn of teardowns.reverse()) {
      try {
        await fn();
      } catch (err) {
        t.fail(name + ': a teardown failed: ' + (err?.stack ?? err));
      }
    }
  }
}
`;
}

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
const testFiles = sources.filter((f) => f.startsWith(join(ROOT, 'test') + sep) && f.endsWith('.test.ts')).sort();
// Given test paths (someone reading a failure, MAILPATH_TEST_BUNDLED=1) run each file in a process of its own.
const alone = testPaths.length > 0 ? testFiles : testFiles.filter((f) => ownProcess(relative(ROOT, f), readFileSync(f, 'utf8')));
const shared = testFiles.filter((f) => !alone.includes(f));
const groups = Array.from({ length: Math.ceil(shared.length / GROUP_SIZE) }, (_, i) => shared.slice(i * GROUP_SIZE, (i + 1) * GROUP_SIZE));
const GROUP_NAMESPACE = 'mailpath-test-group';
if (bundled) {
  await build({
    // The `mailpath` command too: the processes tests start (test/helpers/cli.ts) load it bundled, for the same reason.
    entryPoints: [
      ...alone.map((f) => ({ in: f, out: bundledName(relative(ROOT, f)) })),
      ...groups.map((_, i) => ({ in: `${GROUP_NAMESPACE}:${i}`, out: join('test', '1-grouped', `${String(i + 1).padStart(2, '0')}.test`) })),
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
        name: 'test-file-groups',
        setup(b) {
          b.onResolve({ filter: new RegExp(`^${GROUP_NAMESPACE}:`) }, (args) => ({ path: args.path, namespace: GROUP_NAMESPACE }));
          b.onLoad({ filter: /.*/, namespace: GROUP_NAMESPACE }, (args) => ({
            contents: groupEntry(groups[Number(args.path.split(':')[1])]),
            loader: 'js',
            resolveDir: ROOT,
          }));
        },
      },
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
