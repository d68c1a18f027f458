// Response serialization: a compiled serializer (fast-json-stringify) built from each response's JSON schema, so answers skip zod on the hot path; zod still
// checks every answer when MAILPATH_VALIDATE_RESPONSES is on (tests, dev).
import { isDeepStrictEqual } from 'node:util';
import fastJson from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify/types/schema.js';
import { serializerCompiler as zodSerializerCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';

type Serialize = (data: unknown) => string;

/**
 * The JSON schema of what a response schema *encodes* to (its input side: a codec's wire form), or
 * undefined when zod cannot express it (a transform, a custom check): such a route keeps zod.
 */
function wireSchema(schema: z.ZodType): Record<string, unknown> | undefined {
  try {
    return z.toJSONSchema(schema, { io: 'input', target: 'draft-7', unrepresentable: 'throw' }) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/**
 * Builds Fastify's serializer compiler. Everything is done on a response's first use (start-up would
 * otherwise convert ~2,000 schemas, every route's error envelopes included, most never sent), and
 * compiled serializers are shared by identical JSON schemas (the error envelopes are a handful).
 * With `validate`, each answer is also encoded by zod, and an answer where the two differ fails
 * loudly: the test suite checks the compiled serializer against zod on every answer it sees.
 */
export function responseSerializerCompiler(options: { validate: boolean }): FastifySerializerCompiler<z.ZodType> {
  const shared = new Map<string, Serialize>();
  const compile = (schema: z.ZodType): Serialize | undefined => {
    const json = wireSchema(schema);
    if (!json) return undefined;
    const key = JSON.stringify(json);
    let built = shared.get(key);
    if (!built) {
      built = fastJson(json as never) as Serialize;
      shared.set(key, built);
    }
    return built;
  };
  return (route) => {
    const zodSerialize = zodSerializerCompiler(route) as Serialize;
    let compiled: Serialize | undefined;
    let resolved = false;
    const serializer = (): Serialize | undefined => {
      if (!resolved) {
        compiled = compile(route.schema);
        resolved = true;
      }
      return compiled;
    };
    if (!options.validate) return (data) => (serializer() ?? zodSerialize)(data);
    return (data) => {
      const expected = zodSerialize(data);
      const fast = serializer();
      if (fast) {
        const got = fast(data);
        if (!isDeepStrictEqual(JSON.parse(got), JSON.parse(expected))) {
          throw new Error(`compiled serializer of ${route.method} ${route.url} (${route.httpStatus}) differs from zod: ${got} vs ${expected}`);
        }
      }
      return expected;
    };
  };
}
