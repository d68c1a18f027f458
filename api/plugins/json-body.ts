// The one request body parser: JSON, refused with a reason when malformed, nested too deep, or carrying a prototype-poisoning key.
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../shared/kernel/errors.js';
import { CONTEXT_PLUGIN } from './context.js';

/** Why a parsed body is refused, or undefined. */
type Refusal = 'too_deep' | 'proto' | 'constructor';

const hasOwn = (o: object, key: string) => Object.hasOwn(o, key);

/**
 * Walks the parsed value level by level (no recursion, so no depth can overflow the stack), and stops at the first
 * level past `maxDepth`: a body nested 100,000 deep costs `maxDepth` levels. Also finds what secure-json-parse
 * refuses: an own `__proto__` key, or a `constructor` key whose object has `prototype`.
 */
export function refusalOf(value: unknown, maxDepth: number): Refusal | undefined {
  let level: object[] = value !== null && typeof value === 'object' ? [value] : [];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > maxDepth) return 'too_deep';
    const next: object[] = [];
    for (const node of level) {
      if (!Array.isArray(node)) {
        if (hasOwn(node, '__proto__')) return 'proto';
        if (hasOwn(node, 'constructor')) {
          const ctor = (node as Record<string, unknown>)['constructor'];
          if (ctor !== null && typeof ctor === 'object' && hasOwn(ctor, 'prototype')) return 'constructor';
        }
      }
      for (const child of Object.values(node)) if (child !== null && typeof child === 'object') next.push(child as object);
    }
    level = next;
  }
  return undefined;
}

/**
 * Parses a JSON body; the AppError names what is wrong. An empty body is no body (undefined), whatever its
 * content type says: many clients send `content-type: application/json` on every request, a body-less POST too,
 * and the route then answers as it does without one.
 */
export function parseJsonBody(text: string, maxDepth: number): unknown {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (source.trim() === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    throw new AppError('bad_request', 'malformed JSON body');
  }
  switch (refusalOf(value, maxDepth)) {
    case 'too_deep':
      throw new AppError('bad_request', `JSON body is nested deeper than ${maxDepth} levels of arrays and objects`);
    case 'proto':
      throw new AppError('bad_request', 'JSON body has a "__proto__" key, which is refused (prototype poisoning)');
    case 'constructor':
      throw new AppError('bad_request', 'JSON body has a "constructor" key holding "prototype", which is refused (prototype poisoning)');
    default:
      return value;
  }
}

const jsonBody: FastifyPluginAsyncZod = async (app) => {
  const maxDepth = app.ctx.config.limits.request.max_json_depth;
  // Bodies are JSON only: text/plain goes too, so it is refused as 415 like any other type.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string, maxDepth));
    } catch (err) {
      done(err as AppError, undefined);
    }
  });
};

/** Not encapsulated (fastify-plugin): the parser is the root's, so every route's body goes through it. */
export const jsonBodyPlugin = fp(jsonBody, { name: 'mailpath-json-body', dependencies: [CONTEXT_PLUGIN] });
