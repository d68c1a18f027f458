// Super-admin tenant routes: the tenant list (filters, sorting, paging), one tenant with what an operator needs at a glance, and deletion with all its data.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, type Principal } from '../../shared/accounts/auth/principal.js';
import { notFound } from '../../shared/kernel/errors.js';
import { isUuid } from '../../shared/kernel/ids.js';
import { deleteTenant, listTenants, TENANT_SORTS, type TenantAdminCaller } from '../../shared/accounts/tenants/admin.js';
import { DETAIL_DOMAIN_LIMIT, RATES_WINDOW_DAYS, tenantDetail } from '../../shared/accounts/tenants/detail.js';
import type { TenantSort, TenantSummary } from '../../shared/accounts/tenants/queries.js';
import type { ApiContext } from '../context.js';
import { defineRoute } from '../route.js';
import { idParam, iso, pagination, queryFlag, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: tenants'];

const tenant = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  plan_id: z.string(),
  is_sandbox: z.boolean(),
  is_super_admin: z.boolean(),
  status: z.enum(['active', 'suspended']),
  suspended_at: timestamp.nullable().describe('When the tenant was suspended; null while active'),
  suspension_reason: z.string().nullable().describe('The reason given at suspension, if any; null while active'),
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
  suspended_at: iso(t.suspended_at),
  suspension_reason: t.suspension_reason,
  user_count: t.user_count,
  api_key_count: t.api_key_count,
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
});

const detail = tenant.extend({
  suspension: z.object({ suspended: z.boolean(), suspended_at: timestamp.nullable(), reason: z.string().nullable() }),
  plan: z.object({ id: z.string(), name: z.string(), monthly_send_cap: z.number().int() }),
  quota: z.object({
    month: z.string().describe('YYYY-MM (UTC)'),
    used: z.number().int(),
    cap: z.number().int(),
    remaining: z.number().int(),
    used_pct: z.number().nullable().describe('used / cap in percent, one decimal; null when the cap is 0'),
  }),
  sends_24h: z.number().int().describe('Live sends accepted in the last 24 hours'),
  rates: z.object({
    window_days: z.number().int(),
    sent: z.number().int().describe('Live sends in the window that were not dropped'),
    bounces: z.number().int(),
    hard_bounces: z.number().int(),
    complaints: z.number().int(),
    bounce_rate: z.number().nullable().describe('bounces / sent; null without sends'),
    complaint_rate: z.number().nullable().describe('complaints / sent; null without sends'),
  }),
  domains: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      verified: z.boolean().describe('Verified and not drifted since'),
      verified_at: timestamp.nullable(),
      drifted: z.boolean(),
      warmup_tier: z.number().int(),
      warmup_daily_cap: z.number().int().describe("The tier's daily cap (config/warmup.yaml)"),
      last_send_at: timestamp.nullable(),
    }),
  ),
});

const listQuery = pagination.extend({
  status: z.enum(['active', 'suspended']).optional(),
  plan: z.string().min(1).max(64).optional().describe('Plan id'),
  sandbox: queryFlag.optional().describe('true: sandbox tenants only; false: the others'),
  q: z.string().min(1).max(200).optional().describe('Part of the name or slug (case-insensitive), or a whole tenant id'),
  sort: z
    .enum(Object.keys(TENANT_SORTS) as [TenantSort, ...TenantSort[]])
    .default('-created_at')
    .describe('created_at, name or slug; a leading - sorts descending (default -created_at: newest first)'),
});

/** The super-admin making a change: audit actor and chat label. */
export function callerOf(principal: Principal, ip: string): TenantAdminCaller {
  return { actor: actorOf(principal, ip), label: principal.user?.email ?? 'a super-admin' };
}

/** What the tenant service needs from the API context. */
export const adminDeps = (ctx: ApiContext) => ({ ...ctx, forgetTenant: (id: string) => ctx.credentials.forgetTenant(id) });

export const adminTenantRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'List tenants',
    description:
      'Tenants with user and active-key counts and their suspension. Filters (combined with AND): status, plan (plan id), ' +
      'sandbox (true/false), q (part of the name or slug, or a whole id). sort: created_at, name or slug, - for descending. ' +
      'Paged with limit (1..200, default 50) and offset; total counts every match.',
    query: listQuery,
    response: z.object({ items: z.array(tenant), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ query }) => {
      const page = await listTenants(
        ctx.sql,
        { limit: query.limit, offset: query.offset, sort: query.sort },
        { status: query.status, plan: query.plan, sandbox: query.sandbox, q: query.q },
      );
      return { items: page.items.map(present), total: page.total, limit: query.limit, offset: query.offset };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Read a tenant (operator detail)',
    description:
      `One tenant with what an operator needs at a glance: plan and quota use this UTC month, live sends in the last 24 hours, ` +
      `bounce and complaint counts and rates over ${RATES_WINDOW_DAYS} days, its domains (up to ${DETAIL_DOMAIN_LIMIT}) with their warm-up tier ` +
      'and daily cap, the suspension (when, why) and the sandbox flag. Unknown id → 404.',
    params: idParam('id'),
    errors: [404],
    response: detail,
    handler: async ({ params }) => {
      const d = isUuid(params.id) ? await tenantDetail(ctx, params.id) : undefined;
      if (!d) throw notFound('tenant');
      return {
        ...present(d.tenant),
        suspension: { suspended: d.tenant.status === 'suspended', suspended_at: iso(d.tenant.suspended_at), reason: d.tenant.suspension_reason },
        plan: d.plan,
        quota: d.quota,
        sends_24h: d.sends_24h,
        rates: d.rates,
        domains: d.domains.map((x) => ({ ...x, verified_at: iso(x.verified_at), last_send_at: iso(x.last_send_at) })),
      };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/admin/tenants/:id',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Delete a tenant with all its data',
    description:
      'Deletes the tenant and every row of its data (users, keys, domains, contacts, lists, campaigns, sends, events, inbound mail…) in one ' +
      "transaction. The audit log keeps its rows (it is an append-only hash chain) and gains a tenant.deleted row. The super-admin's own tenant → " +
      '403; unknown → 404.',
    params: idParam('id'),
    errors: [404],
    response: z.object({ deleted: z.literal(true), id: z.string() }),
    handler: async ({ params, principal, ip }) => deleteTenant(adminDeps(ctx), callerOf(principal, ip), params.id),
  });
};
