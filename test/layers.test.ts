// The layering of the source tree: adapters (api/, mta/, plugins/) depend on the domain (shared/), never the other way; only the entry point (main/) composes them; SQL stays in the domain.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const ROOT = projectRoot();
const SOURCE_DIRS = ['main', 'api', 'mta', 'plugins', 'shared'] as const;
type Layer = (typeof SOURCE_DIRS)[number];

/** What each layer may import from the others (its own files always). */
const ALLOWED: Record<Layer, readonly Layer[]> = {
  main: ['api', 'mta', 'plugins', 'shared'],
  api: ['shared'],
  mta: ['shared'],
  plugins: ['mta', 'shared'],
  shared: [],
};

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
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

const files = SOURCE_DIRS.flatMap((layer) => sourceFiles(join(ROOT, layer)).map((file) => ({ layer, file })));

t.test('the source tree has the layers it is checked for', async (t) => {
  for (const layer of SOURCE_DIRS) t.ok(files.some((f) => f.layer === layer), `${layer}/ holds source files`);
  t.ok(files.some((f) => relative(ROOT, f.file) === join('api', 'routes', 'transactional.ts')), 'a known adapter file is scanned');
});

for (const layer of SOURCE_DIRS) {
  t.test(`${layer}/ imports only ${ALLOWED[layer].length ? ALLOWED[layer].map((l) => `${l}/`).join(', ') : 'within itself'}${layer === 'main' ? '' : ' (and never main/)'}`, async (t) => {
    const wrong = files
      .filter((f) => f.layer === layer)
      .flatMap((f) => importsOf(f.file).filter((i) => i.layer !== layer && !(ALLOWED[layer] as readonly string[]).includes(i.layer)).map((i) => `${relative(ROOT, f.file)} → ${i.target}`));
    t.same(wrong, [], 'imports against the layering');
  });
}

t.test('no SQL in the adapters or the entry point: queries live with their domain module in shared/', async (t) => {
  const QUERY = /\b(?:sql|tx|db)`/;
  const code = (file: string) => readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const wrong = files.filter((f) => f.layer !== 'shared' && QUERY.test(code(f.file))).map((f) => relative(ROOT, f.file));
  t.same(wrong, []);
});

t.test('the checker sees a forbidden import when there is one', async (t) => {
  // Guards the regular expression above: a line as an adapter import would be written.
  const sample = "import { acceptSend } from '../../mta/outbound/accept.js';\nexport { x } from './y.js';\nconst m = await import('../api/app.js');";
  const specs = [...sample.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
  t.same(specs, ['../../mta/outbound/accept.js', './y.js', '../api/app.js']);
});
