// Plain-SQL fixtures for tests below the API: a tenant and a domain row, without going through registration or DNS.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../shared/db/connection.js';

export async function insertTenant(db: Queryable, planId = 'free'): Promise<string> {
  const slug = `t-${randomUUID().slice(0, 12)}`;
  const [row] = await db<{ id: string }[]>`insert into tenants (name, slug, plan_id) values (${slug}, ${slug}, ${planId}) returning id`;
  return row!.id;
}

export async function insertDomain(db: Queryable, tenantId: string, name = `${randomUUID().slice(0, 8)}.example`): Promise<string> {
  const [row] = await db<{ id: string }[]>`
    insert into domains (tenant_id, name, unicode_name, created_at) values (${tenantId}, ${name}, ${name}, now()) returning id`;
  return row!.id;
}
