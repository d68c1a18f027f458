// Where a test file lives says what it tests: test/P/name.test.ts tests the source file P/name.ts (or .mjs, or a
// migration's .sql) or the source directory P/name/; test/P/name.aspect.test.ts tests one aspect of that same source.
// A test of behaviour spanning several modules lives in a group folder under test/scenarios/. The whole-tree checks
// stay at test/ top level; test/helpers/ and test/fixtures/ hold support, never tests. docs/testing.md states the rule.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const ROOT = projectRoot();
const TEST_DIR = join(ROOT, 'test');
/** The trees a test may mirror. */
const SOURCE_TREES = ['main', 'api', 'mta', 'plugins', 'jobs', 'shared', 'bench', 'clients', 'web'];
/** What a mirrored test may name besides a directory: a module, the build script, a migration. */
const SOURCE_EXTENSIONS = ['.ts', '.mjs', '.sql'];
/** The whole-tree checks at test/ top level, each about the tree as a whole rather than one module. */
const TOP_LEVEL_CHECKS = ['engines', 'format', 'layers', 'system-packages', 'test-layout', 'typecheck', 'typecheck.web', 'unused-exports', 'wall-time'];
/** A test file's name: the subject, then at most one aspect; lowercase words with hyphens (migrations: digits and underscores). */
const NAME = /^([a-z0-9][a-z0-9_-]*)(?:\.([a-z0-9][a-z0-9-]*))?\.test\.ts$/;

/** Why a test file (its path under test/, with / separators) is not where the rule puts it; undefined when it is. */
function misplaced(path: string, exists: (rootRelative: string) => boolean): string | undefined {
  const parts = path.split('/');
  const file = parts.pop()!;
  const name = NAME.exec(file);
  if (!name) return 'not named <subject>.test.ts or <subject>.<aspect>.test.ts (lowercase, hyphens)';
  const [, subject, aspect] = name;
  if (parts.length === 0) {
    // typecheck.web: the dashboard's tree, checked beside the service's in a file of its own.
    if (TOP_LEVEL_CHECKS.includes(aspect === undefined ? subject! : `${subject}.${aspect}`)) return undefined;
    return `at test/ top level but not one of the whole-tree checks (${TOP_LEVEL_CHECKS.join(', ')})`;
  }
  const [top] = parts;
  if (top === 'scenarios') return parts.length >= 2 ? undefined : 'directly in test/scenarios/: put it in a group folder (test/scenarios/<group>/)';
  if (top === 'helpers' || top === 'fixtures') return `a test in test/${top}/, which holds support only`;
  if (!SOURCE_TREES.includes(top!)) return `under test/${top}/, which mirrors no source tree (${SOURCE_TREES.join(', ')})`;
  const source = [...parts, subject].join('/');
  if (SOURCE_EXTENSIONS.some((ext) => exists(`${source}${ext}`)) || exists(`${source}/`)) return undefined;
  return (
    `mirrors nothing: no ${source}${SOURCE_EXTENSIONS.join('|')} and no directory ${source}/ (move it to mirror its subject, or under ` +
    `test/scenarios/<group>/)`
  );
}

/** Whether a path relative to the project root names a file, or with a trailing / a directory. */
function existsInTree(rootRelative: string): boolean {
  const path = join(ROOT, rootRelative);
  if (!existsSync(path)) return false;
  return rootRelative.endsWith('/') ? statSync(path).isDirectory() : statSync(path).isFile();
}

function testFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...testFiles(path));
    else if (name.endsWith('.test.ts')) out.push(relative(TEST_DIR, path).split(sep).join('/'));
  }
  return out;
}

const files = testFiles(TEST_DIR);

t.test('the test tree has the kinds of files the rule is checked for', async (t) => {
  t.ok(files.includes('layers.test.ts'), 'a whole-tree check');
  t.ok(files.includes('api/routes/campaigns.test.ts'), 'a mirrored test');
  t.ok(files.includes('api/routes/campaign-stats.ab.test.ts'), 'an aspect test');
  t.ok(
    files.some((f) => f.startsWith('scenarios/')),
    'scenarios',
  );
});

t.test('every test file mirrors a source path, lives under test/scenarios/<group>/, or is a whole-tree check', async (t) => {
  const wrong = files.flatMap((f) => {
    const why = misplaced(f, existsInTree);
    return why ? [`test/${f}: ${why}`] : [];
  });
  t.same(wrong, [], 'test files out of place (docs/testing.md: where a test goes)');
});

t.test('the rule tells mirrored, aspect, scenario and top-level files from stray ones', async (t) => {
  const tree = new Set(['api/routes/campaigns.ts', 'main/build.mjs', 'main/dev/', 'shared/db/migrations/107_api_key_role_ceiling.sql']);
  const exists = (p: string) => tree.has(p);
  for (const ok of [
    'api/routes/campaigns.test.ts',
    'api/routes/campaigns.forecast.test.ts',
    'main/build.test.ts',
    'main/dev.test.ts',
    'main/dev.inbox.test.ts',
    'shared/db/migrations/107_api_key_role_ceiling.test.ts',
    'scenarios/api/bad-input.test.ts',
    'layers.test.ts',
  ])
    t.equal(misplaced(ok, exists), undefined, ok);
  for (const [stray, why] of [
    ['api/campaigns.test.ts', /mirrors nothing: no api\/campaigns\.ts/],
    ['api/routes/campaign.test.ts', /mirrors nothing/],
    ['api/routes/campaigns.forecast.lint.test.ts', /not named/],
    ['api/routes/Campaigns.test.ts', /not named/],
    ['scenarios/bad-input.test.ts', /group folder/],
    ['helpers/app.test.ts', /support only/],
    ['smoke/start.test.ts', /mirrors no source tree/],
    ['stray.test.ts', /top level/],
    ['layers.more.test.ts', /top level/],
  ] as const)
    t.match(misplaced(stray, exists), why, stray);
});

t.test("test/run.mjs's LONG_POLES name test files that exist", async (t) => {
  const runner = readFileSync(join(TEST_DIR, 'run.mjs'), 'utf8');
  const list = /const LONG_POLES = \[([^\]]*)\]/.exec(runner)?.[1];
  t.ok(list, 'LONG_POLES found in test/run.mjs');
  const names = [...(list ?? '').matchAll(/'([^']+)'/g)].map((m) => m[1]!);
  t.ok(names.length > 5, `${names.length} long poles`);
  t.same(
    names.filter((n) => !files.includes(`${n}.test.ts`)),
    [],
    'long poles without their test file (a renamed test would silently start late)',
  );
});
