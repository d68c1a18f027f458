// MD5 suppression lists: create, list, read and delete them (JSON), and upload their hashes as a text body streamed in batches.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../shared/kernel/errors.js';
import type { Md5ListRow } from '../../shared/audiences/md5-lists/queries.js';
import { createMd5List, getMd5List, listMd5ListPage, removeMd5List, uploadMd5Entries } from '../../shared/audiences/md5-lists/service.js';
import { exemptFromRequestDeadline } from '../listener.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['MD5 suppression lists'];

const md5List = z.object({
  id: z.string(),
  name: z.string(),
  entry_count: z.number().int().describe('Distinct hashes in the list'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (l: Md5ListRow): z.input<typeof md5List> => ({
  id: l.id,
  name: l.name,
  entry_count: l.entry_count,
  created_at: iso(l.created_at),
  updated_at: iso(l.updated_at),
});

const listId = idParam('id');

/** Body types taken as a file of hashes. */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'application/octet-stream']);

export const md5ListRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/md5-lists',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create an MD5 suppression list',
    description:
      'An empty list of MD5 hashes of lower-cased addresses, as advertisers hand out suppression files. Upload hashes with ' +
      'POST /md5-lists/{id}/entries; a campaign attached to the list skips every recipient whose hash it holds.',
    body: z.strictObject({ name: z.string().min(1).max(200) }),
    status: 201,
    response: md5List,
    handler: async ({ principal, body }) => present(await createMd5List(ctx, principal.tenant.id, body.name)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/md5-lists',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List MD5 suppression lists',
    description: "The tenant's MD5 lists, newest first. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: md5List,
    handler: async ({ principal, query }) => {
      const page = await listMd5ListPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/md5-lists/:id',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read an MD5 suppression list',
    description: 'The list with its number of hashes.',
    params: listId,
    errors: [404],
    response: md5List,
    handler: async ({ principal, params }) => present(await getMd5List(ctx, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/md5-lists/:id',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete an MD5 suppression list',
    description: 'Deletes the list and its hashes.',
    params: listId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params }) => {
      await removeMd5List(ctx, principal.tenant.id, params.id);
      return { deleted: true, id: params.id };
    },
  });
};

/** The upload of hashes: its body is a text file, streamed by the handler (its own group, so the JSON parser stays for the others). */
export const md5EntryRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  // Every type is let through, so the handler refuses a wrong one with a message that names the right one.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  defineRoute(app, {
    method: 'POST',
    url: '/md5-lists/:id/entries',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'bulk',
    tags: TAGS,
    summary: 'Add hashes to an MD5 suppression list',
    description:
      'The body (text/plain) is one MD5 per line: 32 hex digits of md5(lower-cased address). Blank lines are skipped, ' +
      'upper-case hex is accepted, hashes already in the list (or repeated) count as duplicates, any other line as ' +
      'invalid (the first 10 line numbers are returned). The body is streamed and written in batches: an upload cut ' +
      'short keeps the hashes stored before the cut.',
    params: listId,
    consumes: [...TEXT_TYPES],
    errors: [404, 413, 415],
    response: z.object({
      added: z.number().int(),
      duplicates: z.number().int(),
      invalid: z.number().int(),
      invalid_lines: z.array(z.number().int()).describe('The first 10 invalid lines'),
    }),
    handler: async ({ principal, params, request, reply }) => {
      const deadline = exemptFromRequestDeadline(request.raw.socket);
      try {
        const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        if (!TEXT_TYPES.has(type)) throw new AppError('unsupported_media_type', 'send the hashes as text/plain, one per line');
        return await uploadMd5Entries(ctx, principal.tenant.id, params.id, request.raw);
      } catch (err) {
        if (!request.raw.readableEnded) reply.header('connection', 'close');
        throw err;
      } finally {
        deadline.release();
      }
    },
  });
};
