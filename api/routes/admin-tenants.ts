// Super-admin tenant routes: list tenants and read one.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { getTenantSummary, listTenants, type TenantSummary } from '../../shared/tenants/queries.js';
import { defineRoute } from '../route.js';
import { idParam, iso, pagination, timestamp } from '../schemas/common.js';

const tenant = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  plan_id: z.string(),
  is_sandbox: z.boolean(),
  is_super_admin: z.boolean(),
  status: z.enum(['active', 'suspended']),
  user_count: z.number().int(),
  api_key_count: z.number().int().describe('Active API keys'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (t: TenantSummary) => ({
  id: t.id,
  name: t.name,
  slug: t.slug,
  plan_id: t.plan_id,
  is_sandbox: t.is_sandbox,
  is_super_admin: t.is_super_admin,
  status: t.status,
  user_count: t.user_count,
  api_key_count: t.api_key_count,
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

export const adminTenantRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants',
    auth: 'super_admin',
    tags: ['Super-admin: tenants'],
    summary: 'List tenants',
    description: 'Every tenant, newest first, with user and active-key counts.',
    query: pagination,
    response: z.object({ items: z.array(tenant), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ query }) => {
      const page = await listTenants(ctx.sql, query);
      return { items: page.items.map(present), total: page.total, limit: query.limit, offset: query.offset };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id',
    auth: 'super_admin',
    tags: ['Super-admin: tenants'],
    summary: 'Read a tenant',
    description: 'One tenant with its plan, sandbox flag, status and counts.',
    params: idParam('id'),
    errors: [404],
    response: tenant,
    handler: async ({ params }) => {
      const row = isUuid(params.id) ? await getTenantSummary(ctx.sql, params.id) : undefined;
      if (!row) throw notFound('tenant');
      return present(row);
    },
  });
};
