// Maps every failure to the error envelope { ok: false, error, message }: no stack traces, stable slugs.
import { STATUS_CODES } from 'node:http';
import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { hasZodFastifySchemaValidationErrors, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError, type ErrorSlug } from '../../shared/errors.js';

interface ValidationItem {
  keyword: string;
  instancePath: string;
  message?: string;
  params?: Record<string, unknown>;
}

const WHERE: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

function fieldName(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.');
}

/** Unknown fields are a client bug (400); a wrong value names its field (422). */
export function validationToAppError(items: ValidationItem[], context: string | undefined): AppError {
  const where = WHERE[context ?? 'body'] ?? 'body';
  const unknown = items.filter((i) => i.keyword === 'unrecognized_keys');
  if (unknown.length > 0) {
    const keys = unknown.flatMap((i) => (i.params?.['keys'] as string[] | undefined) ?? []).map((k) => {
      const parent = fieldName(unknown[0]!.instancePath);
      return parent ? `${parent}.${k}` : k;
    });
    return new AppError('bad_request', `unexpected field(s) in ${where}: ${keys.join(', ')}`);
  }
  const first = items[0]!;
  const field = fieldName(first.instancePath);
  if (!field && first.keyword === 'invalid_type' && where === 'body') {
    return new AppError('bad_request', 'a JSON object body is required');
  }
  const missing = first.keyword === 'invalid_type' && /received undefined/.test(first.message ?? '');
  const problem = missing ? 'is required' : (first.message ?? 'is invalid');
  const more = items.length > 1 ? ` (and ${items.length - 1} more problem${items.length > 2 ? 's' : ''})` : '';
  return new AppError('validation_error', `${field || where}: ${problem}${more}`);
}

const SLUG_BY_STATUS: Partial<Record<number, ErrorSlug>> = {
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not_found',
  408: 'request_timeout',
  409: 'conflict',
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

function toAppError(err: FastifyError): AppError | undefined {
  if (err instanceof AppError) return err;
  if (hasZodFastifySchemaValidationErrors(err)) {
    return validationToAppError(err.validation as unknown as ValidationItem[], err.validationContext);
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
    const appError = toAppError(err);
    if (!appError) {
      request.log.error({ err }, 'unhandled error');
      return reply.code(500).send({ ok: false, error: 'internal', message: 'internal server error' });
    }
    if (appError.status >= 500) request.log.error({ err }, appError.message);
    return reply.code(appError.status).headers(appError.headers).send({ ok: false, error: appError.slug, message: appError.message, ...appError.details });
  });

  app.setNotFoundHandler((request, reply) => {
    return reply.code(404).send({ ok: false, error: 'not_found', message: `no route ${request.method} ${request.url.split('?')[0]}` });
  });
};

/** Not encapsulated (fastify-plugin): the handlers are the root's, so every route and unknown path gets the envelope. */
export const errorsPlugin = fp(errorHandling, { name: 'mailpath-errors' });
