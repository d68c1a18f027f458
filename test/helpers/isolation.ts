// Tenant isolation: asserts that one tenant's records are 404 to another, for every route given.
import type { FastifyInstance } from 'fastify';
import { call, registerTenant, type TestTenant } from './app.js';

interface Assert {
  equal(actual: unknown, expected: unknown, message: string): unknown;
}

export interface ForeignRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** A URL naming a record of the owner tenant. */
  url: string;
  body?: unknown;
}

/** Registers two tenants: `owner` creates records, `other` must never see them. */
export async function twoTenants(app: FastifyInstance): Promise<{ owner: TestTenant; other: TestTenant }> {
  return { owner: await registerTenant(app), other: await registerTenant(app) };
}

/**
 * Calls every request with the other tenant's credential (a session token or an API key) and
 * asserts 404 not_found each time.
 */
export async function assertForeign404(t: Assert, app: FastifyInstance, otherCredential: string, requests: ForeignRequest[]): Promise<void> {
  for (const r of requests) {
    const res = await call(app, r.method, r.url, { token: otherCredential, ...(r.body !== undefined ? { body: r.body } : {}) });
    t.equal(res.status, 404, `${r.method} ${r.url} from another tenant is 404`);
    t.equal(res.body?.error, 'not_found', `${r.method} ${r.url} from another tenant has slug not_found`);
  }
}
