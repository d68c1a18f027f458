// Bulk contact imports: upload a CSV or NDJSON file as the request body (streamed, never parsed here), read an import's progress and row errors, list recent
// imports.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../shared/kernel/errors.js';
import { rowErrorsCsv } from '../../shared/audiences/imports/errors-csv.js';
import { parseDelimiter, parseMapping } from '../../shared/audiences/imports/options.js';
import type { ImportFormat, ImportRow, RowError } from '../../shared/audiences/imports/queries.js';
import { ERRORS_SHOWN, getImport, listImportPage, requireImport, startImport } from '../../shared/audiences/imports/service.js';
import { exemptFromRequestDeadline } from '../listener.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Contact imports'];

/** Body types taken as a file, and the format each is. */
const FILE_TYPES: Record<string, ImportFormat> = {
  'text/csv': 'csv',
  'application/csv': 'csv',
  'application/x-ndjson': 'json',
  'application/ndjson': 'json',
  'application/jsonl': 'json',
  'application/x-jsonlines': 'json',
};

const importSummary = z.object({
  id: z.string(),
  status: z.enum(['uploading', 'queued', 'running', 'completed', 'failed']).describe('uploading → queued → running → completed, or failed (see error)'),
  format: z.enum(['csv', 'ndjson']),
  on_existing: z.enum(['update', 'skip']),
  list_id: z.string().nullable(),
  mapping: z.record(z.string(), z.string().nullable()).describe('The header mapping given (header → target, null = ignored)'),
  bytes: z.number().int().describe('Size of the uploaded file'),
  rows_total: z.number().int().nullable().describe('Data rows in the file: known once the whole file has been read (null until then)'),
  rows_done: z.number().int().describe('Rows processed so far (inserted + updated + skipped + invalid)'),
  inserted: z.number().int().describe('New contacts (a deleted or erased contact made anew counts here)'),
  updated: z.number().int(),
  skipped: z.number().int().describe('Existing contacts left as they were (on_existing=skip)'),
  invalid: z.number().int().describe('Rows refused; each is listed with its line and reason'),
  error: z.string().nullable().describe('Why the import failed as a whole (empty file, header problem, unreadable CSV at a line); null otherwise'),
  created_at: timestamp,
  started_at: timestamp.nullable(),
  finished_at: timestamp.nullable(),
});

const rowError = z.object({ line: z.number().int().describe('Line of the file where the row starts'), reason: z.string() });

const present = (r: ImportRow): z.input<typeof importSummary> => ({
  id: r.id,
  status: r.status,
  format: r.format === 'csv' ? 'csv' : 'ndjson',
  on_existing: r.options.on_existing,
  list_id: r.options.list_id,
  mapping: r.options.mapping,
  bytes: r.bytes,
  rows_total: r.rows_total,
  rows_done: r.rows_done,
  inserted: r.inserted,
  updated: r.updated,
  skipped: r.skipped,
  invalid: r.invalid,
  error: r.error,
  created_at: iso(r.created_at),
  started_at: iso(r.started_at),
  finished_at: iso(r.finished_at),
});

/** The format of the body's content type; anything else is 415 (a JSON array names NDJSON as the way). */
function formatOf(contentType: string | undefined): ImportFormat {
  const [type = '', ...params] = (contentType ?? '').split(';').map((p) => p.trim().toLowerCase());
  const charset = params
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/"/g, '');
  if (charset && charset !== 'utf-8' && charset !== 'utf8') throw new AppError('unsupported_media_type', 'the file must be UTF-8 (charset=utf-8)');
  const format = FILE_TYPES[type];
  if (format) return format;
  if (type === 'application/json') {
    throw new AppError('unsupported_media_type', 'a JSON import is NDJSON: one contact object per line, sent as application/x-ndjson');
  }
  throw new AppError('unsupported_media_type', 'send the file as text/csv or application/x-ndjson');
}

const importId = idParam('id');

export const contactImportRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  // This group's bodies are files, streamed by the handler: the parsers hand the stream over untouched (the JSON
  // parser and the body limit of other routes do not apply; imports.max_file_bytes does).
  // Every type is let through, so the handler refuses a wrong one with a message that names the right ones.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  defineRoute(app, {
    method: 'POST',
    url: '/contacts/imports',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'bulk',
    tags: TAGS,
    summary: 'Import contacts from a CSV or NDJSON file',
    description:
      'The request body is the file: `text/csv` (a header line, then one contact per line) or `application/x-ndjson` ' +
      '(one JSON object per line, keys as in the contact API). It is streamed into storage as it arrives (up to ' +
      "imports.max_file_bytes, 1 GiB by default) and imported in the background: the answer is 202 with the import's id; " +
      'follow it with GET /contacts/imports/{id}. Options are query parameters: `mapping` (a JSON object header → ' +
      'target: email, status, a reserved column, custom_fields.<key>, or null to ignore the column; unmapped headers ' +
      'matching a column or catalog key by name map themselves, any other column fails the file), `on_existing` ' +
      '(update or skip; default update), `list_id` (add every imported contact to this list), `delimiter` (CSV, one ' +
      'character or "tab"; default ,).',
    query: z.object({
      mapping: z
        .string()
        .max(100_000)
        .optional()
        .describe('JSON object: header → target, e.g. {"E-mail Address":"email","Plan":"custom_fields.plan","Notes":null}'),
      on_existing: z
        .enum(['update', 'skip'])
        .default('update')
        .describe('What happens to contacts that already exist: update them (default) or leave them as they are'),
      list_id: z.uuid().optional().describe("A list of the tenant: every valid row's contact is added to it"),
      delimiter: z.string().max(8).optional().describe('CSV field delimiter: one character, or "tab"; default ","'),
    }),
    consumes: Object.keys(FILE_TYPES),
    status: 202,
    errors: [413, 415],
    response: z.object({ id: z.string(), status: importSummary.shape.status }),
    handler: async ({ principal, query, request, reply }) => {
      const deadline = exemptFromRequestDeadline(request.raw.socket);
      try {
        const format = formatOf(request.headers['content-type']);
        const options = {
          mapping: parseMapping(query.mapping),
          on_existing: query.on_existing,
          list_id: query.list_id ?? null,
          delimiter: parseDelimiter(query.delimiter),
        };
        const row = await startImport(ctx, {
          tenantId: principal.tenant.id,
          apiKeyId: principal.kind === 'api_key' ? principal.key!.id : null,
          format,
          options,
          body: request.raw,
        });
        return { id: row.id, status: row.status };
      } catch (err) {
        // The rest of an unread body is not worth reading: the connection closes after the answer.
        if (!request.raw.readableEnded) reply.header('connection', 'close');
        throw err;
      } finally {
        deadline.release();
      }
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/contacts/imports',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List imports',
    description: "The tenant's imports, newest first, with their progress. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: importSummary,
    handler: async ({ principal, query }) => {
      const page = await listImportPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/contacts/imports/:id',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read an import',
    description: `An import's status and counts, and its first ${ERRORS_SHOWN} invalid rows (line and reason); errors.csv has them all.`,
    params: importId,
    errors: [404],
    response: importSummary.extend({ errors: z.array(rowError).describe(`The first ${ERRORS_SHOWN} invalid rows, by line`) }),
    handler: async ({ principal, params }) => {
      const { row, errors } = await getImport(ctx, principal.tenant.id, params.id);
      return { ...present(row), errors: errors.map((e: RowError) => ({ line: e.line, reason: e.reason })) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/contacts/imports/:id/errors.csv',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: "Download an import's invalid rows",
    description:
      'Every invalid row as CSV with the columns line,reason, by line. A cell that a spreadsheet would read as a formula ' +
      "(starting with = + - @) is prefixed with ' so it stays text.",
    params: importId,
    errors: [404],
    produces: 'text/csv; charset=utf-8',
    response: z.string().describe('line,reason'),
    handler: async ({ principal, params, reply }) => {
      const row = await requireImport(ctx, principal.tenant.id, params.id);
      reply.header('content-disposition', `attachment; filename="import-${row.id}-errors.csv"`);
      return Readable.from(rowErrorsCsv(ctx.sql, row.id));
    },
  });
};
