// The OpenAPI 3.0.3 document (generated from the routes' zod schemas) and the offline API explorer.
import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import type { Config } from '../../shared/config/index.js';

export const API_PREFIX = '/api/v1';

export async function registerOpenApi(app: FastifyInstance, config: Config): Promise<void> {
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
        },
      },
    },
    transform: (args) => {
      // Paths in the document are relative to the server URL, which already ends in /api/v1.
      const relative = args.url.startsWith(API_PREFIX) ? args.url.slice(API_PREFIX.length) || '/' : args.url;
      return jsonSchemaTransform({ ...args, url: relative });
    },
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, {
    routePrefix: `${API_PREFIX}/docs`,
    uiConfig: { url: `${API_PREFIX}/openapi.json`, deepLinking: true, persistAuthorization: true },
    staticCSP: true,
  });
  app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true }, config: { auth: 'public' } }, async () => app.swagger());
}
