// Builds the dashboard: one esbuild bundle of web/src (Preact, code split per page), minified, with content-hashed
// names under assets/, each also precompressed (gzip, brotli) for @fastify/static; index.html names the entry's
// script and style; manifest.json lists every file with its gzip size (the budget test reads it).
//
//   node web/build.mjs [outdir]    into dist/web (or outdir)
//
// main/build.mjs (npm start), `npm run build` and test/run.mjs call buildWeb.
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { build } from 'esbuild';

const WEB = dirname(fileURLToPath(import.meta.url));
const ROOT = join(WEB, '..');
const ASSET_PREFIX = '/app/assets/';

/** Builds the app into outdir (emptied first); answers the manifest it wrote. */
export async function buildWeb(outdir) {
  rmSync(outdir, { recursive: true, force: true });
  const assets = join(outdir, 'assets');
  const result = await build({
    entryPoints: [join(WEB, 'src', 'main.tsx')],
    absWorkingDir: ROOT,
    outdir: assets,
    entryNames: '[name]-[hash]',
    chunkNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome110', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: false,
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
  const outputs = Object.entries(result.metafile.outputs).map(([path, meta]) => ({ path: resolve(ROOT, path), meta }));
  const entryPoint = join(WEB, 'src', 'main.tsx');
  // Every lazily loaded page is an entry point of its own in the metafile: the app's is the one built from main.tsx.
  const entry = outputs.find((o) => o.meta.entryPoint !== undefined && resolve(ROOT, o.meta.entryPoint) === entryPoint);
  if (!entry) throw new Error('web build: no entry script');
  const css = entry.meta.cssBundle ? resolve(ROOT, entry.meta.cssBundle) : undefined;
  const url = (path) => ASSET_PREFIX + relative(assets, path);
  // The entry's static imports load with it: preloaded, so the first page does not wait on a waterfall.
  const preloads = entry.meta.imports.filter((i) => i.kind === 'import-statement').map((i) => url(resolve(ROOT, i.path)));
  const template = readFileSync(join(WEB, 'index.html'), 'utf8');
  const head = [
    css ? `<link rel="stylesheet" href="${url(css)}">` : '',
    ...preloads.map((href) => `<link rel="modulepreload" href="${href}">`),
    `<script type="module" src="${url(entry.path)}"></script>`,
  ].filter(Boolean);
  writeFileSync(join(outdir, 'index.html'), template.replace('<!-- assets -->', head.join('\n    ')));

  const files = [];
  for (const { path } of outputs) {
    const body = readFileSync(path);
    const gzip = gzipSync(body, { level: 9 });
    writeFileSync(`${path}.gz`, gzip);
    writeFileSync(`${path}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
    files.push({ name: relative(assets, path), bytes: body.length, gzip_bytes: gzip.length });
  }
  const manifest = {
    entry: relative(assets, entry.path),
    css: css ? relative(assets, css) : null,
    preloads: preloads.map((href) => basename(href)),
    files,
  };
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

// Run as a command (not imported).
if (process.argv[1] && fileURLToPath(import.meta.url) === realpathSync(process.argv[1])) {
  const started = performance.now();
  const outdir = process.argv[2] ? resolve(process.argv[2]) : join(ROOT, 'dist', 'web');
  const manifest = await buildWeb(outdir);
  const gzip = manifest.files.reduce((sum, f) => sum + f.gzip_bytes, 0);
  process.stderr.write(
    `built the dashboard into ${outdir}: ${manifest.files.length} files, ${(gzip / 1024).toFixed(1)} KB gzip in all, ` +
      `in ${Math.round(performance.now() - started)} ms\n`,
  );
}
