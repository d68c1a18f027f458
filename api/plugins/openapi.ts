// The OpenAPI 3.0.3 document (generated from the routes' zod schemas) and the offline API explorer.
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import fp from 'fastify-plugin';
import { jsonSchemaTransform, jsonSchemaTransformObject, type FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { CONTEXT_PLUGIN } from './context.js';
import { IDEMPOTENCY_HEADERS } from '../route.js';

export const API_PREFIX = '/api/v1';

type Transformed = ReturnType<typeof jsonSchemaTransform>;

/**
 * Documents (only documents: the handlers read and check the header) Idempotency-Key as a request header parameter
 * and Idempotent-Replayed on the 2xx answers. Not a zod `headers` schema: validating it would replace request.headers.
 */
function withIdempotencyHeaders({ schema, url }: Transformed): Transformed {
  const response = { ...(schema['response'] as Record<string, Record<string, unknown>>) };
  for (const code of Object.keys(response)) if (/^2\d\d$/.test(code)) response[code] = { ...response[code], headers: IDEMPOTENCY_HEADERS.response };
  return { schema: { ...schema, headers: IDEMPOTENCY_HEADERS.request, response }, url };
}

/**
 * A route whose body is a file (`consumes`, see defineRoute) gets a binary string as its request body under each
 * media type. Documentation only: Fastify never sees this body schema (the route validates no body).
 */
function withFileBody({ schema, url }: Transformed): Transformed {
  if (!schema['consumes'] || schema['body']) return { schema, url };
  return { schema: { ...schema, body: { type: 'string', format: 'binary', description: 'The file, sent as the request body' } }, url };
}

type OpenApiObject = ReturnType<typeof jsonSchemaTransformObject>;

/**
 * Drops component schemas nothing refers to (the zod provider registers an input and an output copy of every named
 * schema; an answer-only schema's input copy is never used), so validators see no dead components.
 */
export function withoutUnusedSchemas(document: OpenApiObject): OpenApiObject {
  const { components, ...rest } = document as { components?: { schemas?: Record<string, unknown> } };
  const schemas = { ...components?.schemas };
  const referenced = (text: string) => new Set([...text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((m) => m[1]!));
  let used = referenced(JSON.stringify(rest));
  // A schema used only by an unused one is unused too: widen from the operations until nothing new is reached.
  for (;;) {
    const reached = referenced(JSON.stringify([...used].map((name) => schemas[name])));
    const before = used.size;
    used = new Set([...used, ...reached]);
    if (used.size === before) break;
  }
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  return { ...rest, components: { ...components, schemas } } as OpenApiObject;
}

const openApi: FastifyPluginAsyncZod = async (app) => {
  const { config } = app.ctx;
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Mailpath API',
        version: '1.0.0',
        description:
          'Multi-tenant email service provider API. Every response is an envelope: `{ ok: true, data }` on success, ' +
          '`{ ok: false, error, message }` on failure, where `error` is a stable slug. Rate-limit headers ' +
          '(X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset in seconds) come with every response.',
      },
      servers: [{ url: new URL(API_PREFIX, config.publicUrl).toString() }],
      components: {
        securitySchemes: {
          bearerJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Session token from /auth/login or /auth/register' },
          apiKey: { type: 'http', scheme: 'bearer', description: `API key (${config.keyPrefixes.live}… or ${config.keyPrefixes.test}…)` },
          dashboardSession: {
            type: 'apiKey',
            in: 'cookie',
            name: '__Host-mailpath_session',
            description: 'The dashboard session cookie from POST /auth/session; writes also need the X-CSRF-Token header',
          },
        },
      },
    },
    transform: (args) => {
      // Paths in the document are relative to the server URL, which already ends in /api/v1.
      const relative = args.url.startsWith(API_PREFIX) ? args.url.slice(API_PREFIX.length) || '/' : args.url;
      const transformed = withFileBody(jsonSchemaTransform({ ...args, url: relative }));
      return args.route.config?.idempotent ? withIdempotencyHeaders(transformed) : transformed;
    },
    transformObject: (document) => withoutUnusedSchemas(jsonSchemaTransformObject(document)),
  });
  await app.register(swaggerUi, {
    routePrefix: `${API_PREFIX}/docs`,
    uiConfig: { url: `${API_PREFIX}/openapi.json`, deepLinking: true, persistAuthorization: true },
    staticCSP: true,
  });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger());
};

/**
 * Not encapsulated (fastify-plugin): swagger's onRoute hook must sit on the root, so every route group registered
 * after it is documented; the document and the explorer are served at the root under /api/v1.
 */
export const openApiPlugin = fp(openApi, { name: 'mailpath-openapi', dependencies: [CONTEXT_PLUGIN] });
