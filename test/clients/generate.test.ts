// The committed clients match the API: regenerated into a temporary directory they are byte for byte the files in clients/ (else: run `npm run clients`), and
// the document they come from is the one the API serves.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CLIENTS_DIR, GENERATED_FILES, writeClients } from '../../clients/generate.js';
import { buildOpenApiDocument } from '../../clients/openapi-document.js';
import { buildTestApp, call } from '../helpers/app.js';

t.test('the committed clients are what `npm run clients` generates now', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-clients-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  await writeClients(dir);
  for (const file of GENERATED_FILES) {
    const fresh = readFileSync(join(dir, file), 'utf8');
    const committed = readFileSync(join(CLIENTS_DIR, file), 'utf8');
    // Not t.equal: a diff of a megabyte helps nobody; the fix is one command.
    t.ok(fresh === committed, `clients/${file} is up to date (if not: run \`npm run clients\` and commit the result)`);
  }
});

t.test('the document the generator builds without a server is the one the API serves', async (t) => {
  const { app } = await buildTestApp(t);
  const served = (await call(app, 'GET', '/openapi.json')).body;
  const built = await buildOpenApiDocument();
  t.same(Object.keys(built['paths'] as object).sort(), Object.keys(served.paths).sort(), 'the same operations');
  t.same(built, served, 'the same document');
});
