// Compiles TypeScript trees to JavaScript with esbuild, file by file (the same per-file transform tsx applies): no
// type check, no bundle, one .js per .ts at the same relative path. The whole service tree takes about a second, where
// `tsc -p tsconfig.build.json` took 17 s on an idle 2-core machine and 84-100 s on a busy one; so `npm start` and
// `npm run dev` compile with this, and types are checked by `npm run typecheck` and test/typecheck.test.ts.
// `npm run build` stays tsc: the container image and the benches build with it, type errors reported.
//
//   node main/build.mjs [outdir]    the service (tsconfig.build.json's trees) into dist/ (or outdir), laid out as
//                                   `npm run build` lays it out, and the dashboard (web/build.mjs) into its web/
//
// test/run.mjs compiles the tests' tree into .build/ with the same function.
import { readdirSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildWeb } from '../web/build.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The service's trees: those `npm run build` (tsc) compiles, the `include` of tsconfig.build.json. */
export const SERVICE_TREES = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')).include;

function walk(dir, into) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(path, into);
    } else into.push(path);
  }
  return into;
}

/** Every .ts source (not .d.ts) under the trees, as absolute paths. */
export function typescriptSources(trees) {
  return trees.flatMap((tree) => walk(join(ROOT, tree), [])).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
}

/**
 * Compiles `sources` into `outdir`, keeping their paths relative to the project root. Only code is compiled: the
 * service finds its assets (config/, migrations, fonts) from the project root (shared/kernel/paths.ts), so nothing is copied.
 */
export async function compileTree(sources, outdir, { sourcemap = 'linked' } = {}) {
  await build({
    entryPoints: sources,
    outdir,
    outbase: ROOT,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap,
    logLevel: 'warning',
  });
}

// Run as a command (not imported).
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const started = performance.now();
  const sources = typescriptSources(SERVICE_TREES);
  const outdir = process.argv[2] ? resolve(process.argv[2]) : join(ROOT, 'dist');
  await compileTree(sources, outdir);
  // The dashboard beside the compiled service, where api/pages/web-app.ts looks for it.
  await buildWeb(join(outdir, 'web'));
  process.stderr.write(`compiled ${sources.length} files into ${outdir} in ${Math.round(performance.now() - started)} ms (esbuild, types not checked)\n`);
}
