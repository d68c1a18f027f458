// GET /whoami: the tenant, user or API key behind the presented credential.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { defineRoute } from '../route.js';

const whoami = z.object({
  credential: z.enum(['jwt', 'api_key']),
  tenant: z.object({
    id: z.string(),
    name: z.string(),
    slug: z.string(),
    plan_id: z.string(),
    is_sandbox: z.boolean(),
    status: z.string(),
  }),
  user: z.object({ id: z.string(), email: z.string(), role: z.string(), is_super_admin: z.boolean(), first_name: z.string().nullable() }).nullable(),
  key: z
    .object({
      id: z.string(),
      name: z.string(),
      prefix: z.string(),
      mode: z.enum(['live', 'test']),
      scopes: z.array(z.string()).describe('Empty means every scope'),
    })
    .nullable(),
});

export const whoamiRoutes: FastifyPluginAsyncZod = async (app) => {
  defineRoute(app, {
    method: 'GET',
    url: '/whoami',
    auth: 'any',
    scope: 'any_key',
    tags: ['Identity'],
    summary: 'Describe the calling credential',
    description: 'Returns the tenant and either the user (session JWT) or the API key (id, name, prefix, mode, scopes) making the call.',
    response: whoami,
    handler: async ({ principal: p }) => ({
      credential: p.kind === 'user' ? ('jwt' as const) : ('api_key' as const),
      tenant: {
        id: p.tenant.id,
        name: p.tenant.name,
        slug: p.tenant.slug,
        plan_id: p.tenant.plan_id,
        is_sandbox: p.tenant.is_sandbox,
        status: p.tenant.status,
      },
      user: p.user ?? null,
      key: p.key ?? null,
    }),
  });
};
