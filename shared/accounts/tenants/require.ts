// The super-admin surface's first step on a tenant path: the tenant named in the URL, or 404 (a malformed id reads as absent, never as a 400).
import type { Queryable } from '../../db/connection.js';
import { notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { findTenantById, type Tenant } from './queries.js';

export async function requireTenant(db: Queryable, tenantId: string): Promise<Tenant> {
  const tenant = isUuid(tenantId) ? await findTenantById(db, tenantId) : undefined;
  if (!tenant) throw notFound('tenant');
  return tenant;
}
