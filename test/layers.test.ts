// The layering of the source tree: adapters (api/ HTTP in, mta/ SMTP, plugins/ on mta/, jobs/ queued and scheduled work) depend on the domain (shared/),
// never the other way; only the entry point (main/) composes them; SQL stays in the domain.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const ROOT = projectRoot();
const SOURCE_DIRS = ['main', 'api', 'mta', 'plugins', 'jobs', 'shared', 'web'] as const;
type Layer = (typeof SOURCE_DIRS)[number];

/**
 * What each layer may import from the others (its own files always). The dashboard (web/) talks only to the public
 * API, through the client generated from its OpenAPI document (clients/typescript); it may share the domain's pure
 * rules and vocabularies (e.g. the scope catalogue), which its browser bundle refuses if they reach for Node.js
 * (web/build.mjs builds for the browser platform). Nothing imports web/.
 */
const ALLOWED: Record<Layer, readonly string[]> = {
  main: ['api', 'mta', 'plugins', 'jobs', 'shared'],
  api: ['shared'],
  mta: ['shared'],
  plugins: ['mta', 'shared'],
  jobs: ['shared'],
  shared: [],
  web: ['clients', 'shared'],
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Every relative import of a file, as the layer it lands in and the path it names. */
function importsOf(file: string): { layer: string; target: string }[] {
  const text = readFileSync(file, 'utf8');
  const found: { layer: string; target: string }[] = [];
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2]!;
    if (!spec.startsWith('.')) continue;
    const target = relative(ROOT, normalize(join(dirname(file), spec)));
    found.push({ layer: target.split(/[\\/]/)[0]!, target });
  }
  return found;
}

/** A tagged query, typed ones too: sql`…`, tx<Row[]>`…`. */
const QUERY = /\b(?:sql|tx|db)(?:<[^`;=]*?>)?`/;

const files = SOURCE_DIRS.flatMap((layer) => sourceFiles(join(ROOT, layer)).map((file) => ({ layer, file })));

t.test('the source tree has the layers it is checked for', async (t) => {
  for (const layer of SOURCE_DIRS)
    t.ok(
      files.some((f) => f.layer === layer),
      `${layer}/ holds source files`,
    );
  t.ok(
    files.some((f) => relative(ROOT, f.file) === join('api', 'routes', 'transactional.ts')),
    'a known adapter file is scanned',
  );
});

for (const layer of SOURCE_DIRS) {
  t.test(
    `${layer}/ imports only ` +
      `${ALLOWED[layer].length ? ALLOWED[layer].map((l) => `${l}/`).join(', ') : 'within itself'}${layer === 'main' ? '' : ' (and never main/)'}`,
    async (t) => {
      const wrong = files
        .filter((f) => f.layer === layer)
        .flatMap((f) =>
          importsOf(f.file)
            .filter((i) => i.layer !== layer && !(ALLOWED[layer] as readonly string[]).includes(i.layer))
            .map((i) => `${relative(ROOT, f.file)} → ${i.target}`),
        );
      t.same(wrong, [], 'imports against the layering');
    },
  );
}

t.test('no SQL in the adapters or the entry point: queries live with their domain module in shared/', async (t) => {
  const code = (file: string) =>
    readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
  const wrong = files.filter((f) => f.layer !== 'shared' && QUERY.test(code(f.file))).map((f) => relative(ROOT, f.file));
  t.same(wrong, []);
});

t.test('the dashboard runs in the browser: web/ imports no Node.js module', async (t) => {
  const wrong = files
    .filter((f) => f.layer === 'web')
    .flatMap((f) =>
      [...readFileSync(f.file, 'utf8').matchAll(IMPORT)]
        .map((m) => m[1] ?? m[2]!)
        .filter((spec) => spec.startsWith('node:'))
        .map((spec) => `${relative(ROOT, f.file)} → ${spec}`),
    );
  t.same(wrong, []);
  t.ok(
    files.some((f) => f.layer === 'web' && f.file.endsWith('.tsx')),
    'the pages (.tsx) are scanned',
  );
});

t.test('the checker sees a forbidden import when there is one', async (t) => {
  // Guards the regular expression above: a line as an adapter import would be written.
  const sample = "import { acceptSend } from '../../mta/outbound/accept.js';\nexport { x } from './y.js';\nconst m = await import('../api/app.js');";
  const specs = [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
  t.same(specs, ['../../mta/outbound/accept.js', './y.js', '../api/app.js']);
});

t.test('the query checker sees a typed query', async (t) => {
  t.ok(QUERY.test('await tx<{ id: string }[]>`select id from sends`'));
  t.ok(QUERY.test('await sql`select 1`'));
  t.notOk(QUERY.test('const sqlText = `select 1`'));
});

/** Modules that talk to the network, the file system or other threads: the domain gets them through ports, not imports. */
const CLIENTS = new Set([
  'node:net',
  'node:tls',
  'node:http',
  'node:https',
  'node:http2',
  'node:dgram',
  'node:dns',
  'node:dns/promises',
  'node:fs',
  'node:fs/promises',
  'node:worker_threads',
  'node:child_process',
  'undici',
  'smtp-server',
  'piscina',
  'dns2',
  'nodemailer',
]);
/** Pure functions those modules also export (address parsing), which the domain may use. */
const PURE = new Set(['isIP', 'isIPv4', 'isIPv6', 'BlockList']);
/** The domain files allowed a client, each for its reason. */
const CLIENT_ALLOWED: Record<string, string> = {
  'shared/config/index.ts': 'reads the config/*.yaml files at start-up',
  'shared/kernel/paths.ts': 'finds the project root on disk',
  'shared/kernel/data-dir.ts': 'creates and locks the data dir',
  'shared/kernel/tls.ts': 'reads or generates the TLS pair in the data dir',
  'shared/kernel/dns.ts': 'the resolver every DNS rule is given (tests pass a loopback server)',
  'shared/db/migrate.ts': 'reads the migration files',
  'shared/db/embedded.ts': 'starts the embedded database in the data dir',
  'shared/sending/system-mail/mailer.ts': 'writes system mail to a directory when no sender is wired (dev, tests)',
  'shared/engagement/tracking/hit-spool.ts': 'the local spool of tracking hits: a file queue by design',
};

/** The non-type imports of a file from client modules, as "module {names}". */
function clientImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const found: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+(type\s+)?([^'"]*?)\s*from\s*['"]([^'"]+)['"]/g)) {
    const [, typeOnly, clause, spec] = m;
    if (typeOnly || !CLIENTS.has(spec!.replace(/\/lib\/.*$/, ''))) continue;
    if (spec!.startsWith('nodemailer/lib/') && spec !== 'nodemailer/lib/smtp-transport') continue; // MIME building, no transport
    const names = /^\{([^}]*)\}$/
      .exec(clause!.trim())?.[1]
      ?.split(',')
      .map(
        (n) =>
          n
            .trim()
            .replace(/^type\s+/, '')
            .split(/\s+as\s+/)[0]!,
      )
      .filter(Boolean);
    if (names && names.every((n) => PURE.has(n) || /^type\s/.test(n))) continue;
    found.push(`${spec} ${clause!.trim()}`);
  }
  return found;
}

t.test('shared/ opens no network, file or thread client outside its allow-list', async (t) => {
  const wrong = files
    .filter((f) => f.layer === 'shared' && !(relative(ROOT, f.file) in CLIENT_ALLOWED))
    .flatMap((f) => clientImports(f.file).map((i) => `${relative(ROOT, f.file)}: ${i}`));
  t.same(wrong, [], 'client imports in the domain');
  for (const allowed of Object.keys(CLIENT_ALLOWED)) {
    t.ok(
      files.some((f) => relative(ROOT, f.file) === allowed && clientImports(f.file).length > 0),
      `${allowed} still needs its allowance`,
    );
  }
});

t.test('transactions are composed in shared/: no adapter or entry-point file opens one', async (t) => {
  const BEGIN = /\.begin\(/;
  const code = (file: string) =>
    readFileSync(file, 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/^\s*\/\/.*$/gm, '');
  const opening = files.filter((f) => f.layer !== 'shared' && BEGIN.test(code(f.file))).map((f) => relative(ROOT, f.file));
  t.same(opening, [], 'sql.begin outside shared/');
});

/** The value names a statement imports (`import type {…}` and `type X` specifiers bring no value). */
function valueImports(statement: string): string[] {
  if (/^\s*import\s+type\b/.test(statement)) return [];
  const names = /\{([^}]*)\}/.exec(statement)?.[1] ?? '';
  return names
    .split(',')
    .map((n) => n.trim())
    .filter((n) => n !== '' && !n.startsWith('type '));
}

const IMPORT_STATEMENT = /(?:^|\n)\s*(import\s[^;]*?from\s*['"]([^'"]+)['"])/g;

t.test('routes call services, not query modules: api/ imports only types from a *queries.ts module', async (t) => {
  const offenders = files
    .filter((f) => f.layer === 'api')
    .flatMap(({ file }) =>
      [...readFileSync(file, 'utf8').matchAll(IMPORT_STATEMENT)]
        .filter((m) => /queries\.js$/.test(m[2]!) && valueImports(m[1]!).length > 0)
        .map((m) => `${relative(ROOT, file)}: ${valueImports(m[1]!).join(', ')} from ${m[2]}`),
    );
  t.same(offenders, [], "values from query modules in api/ (call the context's service, or export the read from it)");
  t.same(valueImports("import type { A, B } from './queries.js'"), [], 'a type-only import brings no value');
  t.same(valueImports("import { a, type B } from './queries.js'"), ['a'], 'a mixed import brings its values');
});
