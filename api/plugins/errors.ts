// Maps every failure to the error envelope { ok: false, error, message }: no stack traces, stable slugs.
import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError, type ErrorSlug } from '../../shared/kernel/errors.js';
import { closest } from '../../shared/kernel/suggest.js';
import { AllowedMethods } from '../allowed-methods.js';

interface ValidationItem {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

const WHERE: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

/** Problems named in one validation message; past it the rest are counted. */
const PROBLEMS_SHOWN = 10;

function fieldName(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.');
}

/** A zod schema's own definition (zod 4), as far as the key lookup below reads it. */
interface ZodLike {
  _zod?: { def?: { type?: string; shape?: Record<string, ZodLike>; innerType?: ZodLike; element?: ZodLike; in?: ZodLike; out?: ZodLike } };
}

/** The field names the object schema at `path` (JSON pointer) of `schema` knows, through optional, nullable, default, pipe and array wrappers. */
export function knownKeysAt(schema: unknown, path: string): string[] {
  let node = schema as ZodLike | undefined;
  const unwrap = () => {
    for (let i = 0; i < 20 && node?._zod?.def; i++) {
      const def = node._zod.def;
      const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
      if (!inner) return;
      node = inner;
    }
  };
  for (const segment of path.split('/').filter(Boolean)) {
    unwrap();
    const def = node?._zod?.def;
    node = def?.type === 'array' ? def.element : def?.shape?.[segment];
  }
  unwrap();
  return Object.keys(node?._zod?.def?.shape ?? {});
}

/**
 * Unknown fields are a client bug (400), each with the known field it is nearest to ("did you mean"); wrong values
 * name their fields (422), up to PROBLEMS_SHOWN of them, the first as before. `schema` is the route's schema of that
 * part of the request, where the known fields are read from.
 */
export function validationToAppError(items: ValidationItem[], context: string | undefined, schema?: unknown): AppError {
  const where = WHERE[context ?? 'body'] ?? 'body';
  const unknown = items.filter((i) => i.keyword === 'unrecognized_keys');
  if (unknown.length > 0) {
    const keys = unknown.flatMap((i) => {
      const parent = fieldName(i.instancePath);
      const known = knownKeysAt(schema, i.instancePath);
      return ((i.params?.['keys'] as string[] | undefined) ?? []).map((k) => {
        const near = closest(k, known);
        const full = (name: string) => (parent ? `${parent}.${name}` : name);
        return near ? `${full(k)} (did you mean ${full(near)}?)` : full(k);
      });
    });
    return new AppError('bad_request', `unexpected field(s) in ${where}: ${keys.join(', ')}`);
  }
  const first = items[0]!;
  if (!fieldName(first.instancePath) && first.keyword === 'invalid_type' && where === 'body') {
    return new AppError('bad_request', 'a JSON object body is required');
  }
  const problems = items.slice(0, PROBLEMS_SHOWN).map((item) => {
    const missing = item.keyword === 'invalid_type' && /received undefined/.test(item.message ?? '');
    return `${fieldName(item.instancePath) || where}: ${missing ? 'is required' : (item.message ?? 'is invalid')}`;
  });
  const rest = items.length - problems.length;
  const more = rest > 0 ? ` (and ${rest} more problem${rest > 1 ? 's' : ''})` : '';
  return new AppError('validation_error', `${problems.join('; ')}${more}`);
}

const SLUG_BY_STATUS: Partial<Record<number, ErrorSlug>> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
  405: 'method_not_allowed',
  410: 'gone',
  413: 'payload_too_large',
  431: 'headers_too_large',
  429: 'rate_limited',
};

/**
 * Any other 4xx from Fastify or one of its plugins (FST_* codes, e.g. @fastify/static's 403 on a bad path)
 * keeps its status: a client error, not a 500. Other libraries' statusCode fields are not trusted.
 */
function otherClientError(err: FastifyError): AppError | undefined {
  const status = err.statusCode;
  if (!err.code?.startsWith('FST_') || status === undefined || status < 400 || status > 499) return undefined;
  const message = (STATUS_CODES[status] ?? 'request refused').toLowerCase();
  return new AppError(SLUG_BY_STATUS[status] ?? 'bad_request', message, { status });
}

function toAppError(err: FastifyError, schema: Record<string, unknown> | undefined): AppError | undefined {
  if (err instanceof AppError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    return validationToAppError(err.validation as unknown as ValidationItem[], err.validationContext, schema?.[err.validationContext ?? 'body']);
  }
  switch (err.statusCode) {
    case 400:
      if (err.code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return new AppError('bad_request', 'the body is shorter or longer than its Content-Length');
      return new AppError('bad_request', /json/i.test(err.message) ? 'malformed JSON body' : err.message);
    case 413:
      return new AppError('payload_too_large', 'request body is too large');
    case 415:
      return new AppError('unsupported_media_type', 'send the body as application/json');
    default:
      return otherClientError(err);
  }
}

const errorHandling: FastifyPluginAsyncZod = async (app) => {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = toAppError(err, request.routeOptions.schema as Record<string, unknown> | undefined);
    if (!appError) {
      request.log.error({ err }, 'unhandled error');
      return reply.code(500).send({ ok: false, error: 'internal', message: 'internal server error' });
    }
    if (appError.status >= 500) request.log.error({ err }, appError.message);
    return reply
      .code(appError.status)
      .headers(appError.headers)
      .send({ ok: false, error: appError.slug, message: appError.message, ...appError.details });
  });

  // Every route is registered after this root plugin, so the hook sees them all.
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.url, route.method));

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const methods = allowed.of(path);
    // A route that serves this method may still call the not-found handler (a missing static file): that is a 404.
    if (methods.length > 0 && !methods.includes(request.method)) {
      // A known path asked with a method it is not served with (RFC 9110 15.5.6): say which ones it takes.
      return reply
        .code(405)
        .header('allow', methods.join(', '))
        .send({
          ok: false,
          error: 'method_not_allowed',
          message: `${request.method} is not allowed on ${path}; allowed: ${methods.join(', ')}`,
        });
    }
    return reply.code(404).send({ ok: false, error: 'not_found', message: `no route ${request.method} ${path}` });
  });
};

/** Not encapsulated (fastify-plugin): the handlers are the root's, so every route and unknown path gets the envelope. */
export const errorsPlugin = fp(errorHandling, { name: 'mailpath-errors' });
