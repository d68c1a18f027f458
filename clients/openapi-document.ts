// Produces the OpenAPI document the API serves at /api/v1/openapi.json without a database or a listener: the routes are registered, never called.
import postgres from 'postgres';
import { buildApp } from '../api/app.js';
import type { ApiContext } from '../api/context.js';
import { systemClock } from '../shared/kernel/clock.js';
import { loadConfig } from '../shared/config/index.js';
import { createLogger } from '../shared/kernel/log.js';

/**
 * The document as the API serves it. Registration reads only the configuration (the server URL, the key prefixes
 * in descriptions) and builds a few recorders around a lazy database handle that nothing ever queries; the other
 * services are reached only by handlers, which never run here. A fixed empty environment keeps the document the
 * same on every machine (server URL https://localhost:8443/api/v1).
 */
export async function buildOpenApiDocument(): Promise<Record<string, unknown>> {
  const config = loadConfig({ MAILPATH_LOG_LEVEL: 'silent' });
  const log = createLogger('silent');
  // postgres.js connects on the first query; none is made.
  const sql = postgres('postgres://unused@127.0.0.1:1/unused', { max: 1 });
  const ctx = { config, log, sql, clock: systemClock } as unknown as ApiContext;
  const app = await buildApp(ctx);
  try {
    await app.ready();
    return app.swagger() as unknown as Record<string, unknown>;
  } finally {
    await app.close();
    await sql.end({ timeout: 1 });
  }
}
