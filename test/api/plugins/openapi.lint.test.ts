// The live OpenAPI document under an independent linter (Redocly's strict rule set), and what a generator needs from
// it beyond validity: non-JSON answers and bodies under their real media types, error schemas without foreign fields.
import { createConfig, lintFromString } from '@redocly/openapi-core';
import t from 'tap';
import { buildTestApp, call } from '../../helpers/app.js';

type Doc = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
};
type Operation = {
  requestBody?: { required?: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
};

/**
 * Rules turned off, each for a reason that is not a defect of the document: Mailpath is UNLICENSED (no license to
 * name), and the server URL is the deployment's public URL, which is localhost in tests and dev.
 */
const RULES_OFF = { 'info-license': 'off', 'no-server-example.com': 'off' } as const;
/**
 * The spec's own paths: `/contacts/imports/{id}` and `/contacts/{id}/erase` meet only at an id `imports` (a UUID never is).
 * The same holds for every `/contacts/{id}/<word>` (resubscribe, lists); Redocly names only the first one it met.
 */
const SPEC_AMBIGUITIES = ['Found two ambiguous paths: `/contacts/{id}/erase` and `/contacts/imports/{id}`.'];

t.test('Redocly recommended-strict finds no problem in the live document', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  const config = await createConfig({ extends: ['recommended-strict'], rules: RULES_OFF });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
  const found = problems.map((p) => `${p.ruleId}: ${p.message} @ ${p.location[0]?.pointer ?? ''}`);
  const unexpected = found.filter((line) => !SPEC_AMBIGUITIES.some((known) => line.includes(known)));
  t.same(unexpected, [], 'no lint problem');
  t.equal(found.length - unexpected.length, SPEC_AMBIGUITIES.length, 'the known ambiguity is still the only one (drop it here once gone)');
});

t.test('CSV, PDF and rfc822 answers are declared under their media types; errors stay JSON', async (t) => {
  const { app } = await buildTestApp(t);
  const doc: Doc = (await call(app, 'GET', '/openapi.json')).body;
  const answers: [string, string, string][] = [
    ['/campaigns/{id}/engagement.csv', 'text/csv', 'string'],
    ['/audit-events.csv', 'text/csv', 'string'],
    ['/contacts/imports/{id}/errors.csv', 'text/csv', 'string'],
    ['/audit-events/export.pdf', 'application/pdf', 'binary'],
    ['/sends/{id}/raw', 'message/rfc822', 'binary'],
    ['/mail/messages/{id}/raw', 'message/rfc822', 'binary'],
  ];
  for (const [path, type, form] of answers) {
    const op = doc.paths[path]!['get']!;
    const ok = op.responses['200']!;
    t.same(Object.keys(ok.content ?? {}), [type], `GET ${path} answers ${type} only`);
    t.equal(ok.content?.[type]?.schema['type'], 'string', `GET ${path}: a string body`);
    if (form === 'binary') t.equal(ok.content?.[type]?.schema['format'], 'binary', `GET ${path}: bytes (a generator hands back a blob)`);
    else t.notOk(ok.content?.[type]?.schema['format'], `GET ${path}: text`);
    t.same(Object.keys(op.responses['404']?.content ?? op.responses['422']!.content!), ['application/json'], `GET ${path}: errors are JSON envelopes`);
  }
});

t.test('file uploads declare their request bodies under the media types the handlers take', async (t) => {
  const { app } = await buildTestApp(t);
  const doc: Doc = (await call(app, 'GET', '/openapi.json')).body;
  const imports = doc.paths['/contacts/imports']!['post']!.requestBody!;
  t.equal(imports.required, true);
  t.same(Object.keys(imports.content).sort(), [
    'application/csv',
    'application/jsonl',
    'application/ndjson',
    'application/x-jsonlines',
    'application/x-ndjson',
    'text/csv',
  ]);
  t.same(imports.content['text/csv']!.schema, { type: 'string', format: 'binary', description: 'The file, sent as the request body' });
  const hashes = doc.paths['/md5-lists/{id}/entries']!['post']!.requestBody!;
  t.same(Object.keys(hashes.content).sort(), ['application/octet-stream', 'text/csv', 'text/plain']);
  t.notOk(doc.paths['/contacts']!['post']!.requestBody!.content['text/csv'], 'JSON routes declare JSON only');
});

t.test('the shared error schema holds only ok, error and message; the PDF export declares its over-limit answer', async (t) => {
  const { app } = await buildTestApp(t);
  const doc: Doc = (await call(app, 'GET', '/openapi.json')).body;
  t.same(Object.keys(doc.components.schemas['Error']!.properties!), ['ok', 'error', 'message']);
  t.same(Object.keys(doc.components.schemas['OverLimitError']!.properties!), ['ok', 'error', 'message', 'limit', 'row_count']);
  const pdf400 = JSON.stringify(doc.paths['/audit-events/export.pdf']!['get']!.responses['400']);
  t.match(pdf400, /#\/components\/schemas\/OverLimitError/, 'the export names its over-limit answer');
  t.notMatch(JSON.stringify(doc.paths['/whoami']!['get']!.responses), /OverLimitError|row_count/, 'other routes do not');
  t.notOk(
    Object.keys(doc.components.schemas).some((name) => name.endsWith('Input') && !JSON.stringify(doc).includes(`schemas/${name}"`)),
    'no unused component',
  );
});
