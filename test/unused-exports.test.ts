// No dead code and no import cycles: knip (knip.jsonc at the root names the entry points) reports no unused file, export,
// type or dependency, and no module of main api mta plugins jobs shared reaches itself through its relative imports.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import t from 'tap';
import { projectRoot } from '../shared/kernel/paths.js';

const ROOT = projectRoot();

/** knip's exit code and everything it printed (it takes about 5 s on this tree; the bound leaves room for a loaded machine). */
function runKnip(timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    // Without tap's NODE_OPTIONS (its process-info hook would measure every module knip loads).
    const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1' };
    delete env['NODE_OPTIONS'];
    execFile(
      join(ROOT, 'node_modules', '.bin', 'knip'),
      ['--no-progress'],
      { cwd: ROOT, env, timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
        const timedOut = err?.killed ? `knip did not finish in ${timeoutMs / 1000} s\n` : '';
        resolve({ code, output: `${timedOut}${stdout}${stderr}`.trim() });
      },
    );
  });
}

t.test('knip reports no unused files, exports, types or dependencies', { timeout: 150_000 }, async (t) => {
  const { code, output } = await runKnip(120_000);
  // The listing is the message: each line names a file, or an export and where it is (delete it, or un-export it).
  t.equal(output, '', output === '' ? 'knip reports nothing' : `knip reports:\n${output}`);
  t.equal(code, 0, 'knip exits 0');
});

const SOURCE_DIRS = ['main', 'api', 'mta', 'plugins', 'jobs', 'shared', 'web'];

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.tsx?$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * The static specifiers of a module: `import … from`, `import type … from`, `export … from` and `import '…'`. Type-only
 * imports count (a cycle of types is still two modules that cannot be read apart); `import()` does not (a lazy load).
 */
const STATIC_IMPORT = /(?:^|\n)[ \t]*(?:(?:import|export)\s[^'"]*?from\s*|import\s*)['"]([^'"]+)['"]/g;

/** Each source file and the source files its relative imports name ('./x.js' is ./x.ts). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const targets = new Set<string>();
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (!spec!.startsWith('.')) continue;
      // The service names './x.js' for ./x.ts; the dashboard (bundled) names './x' for ./x.ts or ./x.tsx.
      const base = normalize(join(dirname(file), spec!));
      const target = [base.replace(/\.js$/, '.ts'), `${base}.ts`, `${base}.tsx`].find((path) => existsSync(path) && statSync(path).isFile());
      if (target) targets.add(target);
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

/**
 * Every cycle of the graph, one per strongly connected component (Tarjan's algorithm): the shortest path from the
 * component's first module back to itself, as "a → b → a". A component of more than two modules may hold other cycles
 * too; breaking the one named and running again shows them.
 */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)?.includes(v)) components.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components.map((component) => {
    const members = new Set(component);
    const start = component[0]!;
    // Breadth first from start, within the component, until an edge leads back to start.
    const parent = new Map<string, string>();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const v = queue[i]!;
      for (const w of graph.get(v) ?? []) {
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(parent.get(path[0]!)!);
          return [...path, start];
        }
        if (members.has(w) && !parent.has(w) && w !== start) {
          parent.set(w, v);
          queue.push(w);
        }
      }
    }
    return [start, start];
  });
}

t.test('no import cycles among main/ api/ mta/ plugins/ jobs/ shared/', async (t) => {
  const files = SOURCE_DIRS.flatMap((dir) => sourceFiles(join(ROOT, dir)));
  t.ok(files.length > 300, `the walker sees the tree (${files.length} files)`);
  const graph = importGraph(files);
  const edges = [...graph.values()].reduce((n, targets) => n + targets.length, 0);
  t.ok(edges > files.length, `the walker resolves the imports (${edges})`);
  const cycles = cyclesOf(graph).map((cycle) => cycle.map((f) => relative(ROOT, f)).join(' → '));
  t.same(cycles, [], cycles.length === 0 ? 'no cycles' : `import cycles (move what both modules need to one they both import):\n${cycles.join('\n')}`);
});

t.test('the cycle checker sees a cycle when there is one', async (t) => {
  // Guards the walker: the specifier forms it must read, and a cycle of three beside one of two and a self-import.
  const sample =
    "import type { A } from './a.js';\nexport { b } from '../b.js';\nimport './side.js';\nexport * from './all.js';\nconst c = await " +
    "import('./lazy.js');\n// import { d } from './commented.js';";
  t.same(
    [...sample.matchAll(STATIC_IMPORT)].map((m) => m[1]),
    ['./a.js', '../b.js', './side.js', './all.js'],
  );
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c', 'x']],
    ['c', ['a']],
    ['x', []],
    ['y', ['z']],
    ['z', ['y']],
    ['s', ['s']],
  ]);
  t.same(cyclesOf(graph), [
    ['a', 'b', 'c', 'a'],
    ['s', 's'],
    ['y', 'z', 'y'],
  ]);
});
