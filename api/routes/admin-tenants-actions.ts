// Super-admin actions on tenants: suspend and unsuspend (one or in bulk), bulk delete, and impersonation tokens.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { IMPERSONATION_TTL, mintImpersonationToken } from '../../shared/accounts/impersonation/mint.js';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { bulkTenantAction, changeTenantStatus, type BulkAction } from '../../shared/accounts/tenants/admin.js';
import { defineRoute, type ApiInstance } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';
import { adminDeps, callerOf } from './admin-tenants.js';

const TAGS = ['Super-admin: tenants'];
/** Spec, Limits: bulk sizes, tenants 100 per call. */
export const MAX_BULK_TENANTS = 100;

const reason = z.string().trim().max(500).optional().describe('Why (kept in the audit row, shown in the tenant detail and the chat notification)');
const statusBody = z.strictObject({ reason }).nullish();
const tenantIds = z.array(z.string().max(64)).min(1).max(MAX_BULK_TENANTS).describe(`Tenant ids, 1..${MAX_BULK_TENANTS}; repeated ids are done once`);

const bulkResult = z.object({
  bulk_request_id: z.string().describe('Carried by the audit row of every change this request made'),
  action: z.enum(['suspend', 'unsuspend', 'delete']),
  results: z.array(
    z.object({
      tenant_id: z.string(),
      status: z
        .enum(['suspended', 'active', 'deleted', 'already_suspended', 'already_active', 'error'])
        .describe('The outcome of the row; error with a reason when it failed (unknown tenant, the super-admin tenant)'),
      reason: z.string().optional(),
    }),
  ),
  succeeded: z.number().int(),
  failed: z.number().int(),
});

const BULK_NOTE =
  `At most ${MAX_BULK_TENANTS} ids (more → 422). Each tenant is done in its own transaction: a row that fails reports status error ` +
  'with a reason and the others go on; the answer is 200 whatever the rows. Every audit row of the request carries its bulk_request_id.';

function bulkRoute(app: ApiInstance, url: string, summary: string, fixed: BulkAction | undefined): void {
  const { ctx } = app;
  const body = fixed
    ? z.strictObject({ tenant_ids: tenantIds, ...(fixed === 'delete' ? {} : { reason }) })
    : z.strictObject({ tenant_ids: tenantIds, action: z.enum(['suspend', 'unsuspend']), reason });
  defineRoute(app, {
    method: 'POST',
    url,
    auth: 'super_admin',
    tags: TAGS,
    summary,
    description:
      (fixed === 'delete'
        ? "Deletes each tenant with all its data; the super-admin tenant reports status error with reason 'cannot delete super-admin tenant'. "
        : fixed
          ? `Alias of POST /admin/tenants/bulk-action with action ${fixed}. `
          : 'Suspends or unsuspends each tenant (as POST /admin/tenants/{id}/suspend and /unsuspend). ') + BULK_NOTE,
    body,
    response: bulkResult,
    handler: async ({ body, principal, ip }) => {
      const b = body as { tenant_ids: string[]; action?: 'suspend' | 'unsuspend'; reason?: string };
      return bulkTenantAction(adminDeps(ctx), callerOf(principal, ip), b.tenant_ids, fixed ?? b.action!, b.reason);
    },
  });
}

export const adminTenantActionRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  for (const action of ['suspend', 'unsuspend'] as const) {
    defineRoute(app, {
      method: 'POST',
      url: `/admin/tenants/:id/${action}`,
      auth: 'super_admin',
      tags: TAGS,
      summary: action === 'suspend' ? 'Suspend a tenant' : 'Unsuspend a tenant',
      description:
        action === 'suspend'
          ? "Blocks the tenant's sends (API, SMTP submission, campaign fan-out, scheduled campaigns) and its users' logins and sessions, " +
            'with an audit row and a chat notification. Campaigns wait (waiting_reason tenant_suspended) and go on after unsuspension. ' +
            "Already suspended: nothing changes. The super-admin's own tenant → 403; unknown → 404. Body optional: {reason}."
          : 'Lifts the suspension: sends and logins resume, campaigns that waited go on. Audit row and chat notification. Already active: nothing changes. ' +
            'Unknown → 404.',
      params: idParam('id'),
      ...(action === 'suspend' ? { body: statusBody } : {}),
      errors: [404],
      response: z.object({ status: z.enum(['active', 'suspended']) }),
      handler: async ({ params, body, principal, ip }) => {
        const change = await changeTenantStatus(adminDeps(ctx), callerOf(principal, ip), params.id, action, {
          reason: (body as { reason?: string } | undefined)?.reason,
        });
        return { status: change.status };
      },
    });
  }

  bulkRoute(app, '/admin/tenants/bulk-action', 'Suspend or unsuspend tenants in bulk', undefined);
  bulkRoute(app, '/admin/tenants/bulk/suspend', 'Suspend tenants in bulk', 'suspend');
  bulkRoute(app, '/admin/tenants/bulk/unsuspend', 'Unsuspend tenants in bulk', 'unsuspend');
  bulkRoute(app, '/admin/tenants/bulk/delete', 'Delete tenants in bulk', 'delete');

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/impersonate',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Impersonate a tenant',
    description:
      `A JWT scoped to the tenant (claims is_impersonating true and impersonator_user_id, the caller) valid ttl_minutes ` +
      `(${IMPERSONATION_TTL.minMinutes}..${IMPERSONATION_TTL.maxMinutes}, default ${IMPERSONATION_TTL.defaultMinutes}). With it the super-admin acts ` +
      `as the tenant's owner; ` +
      "it reaches no /admin route and not the super-admin's own account (/auth/*). Every POST, PUT, PATCH or DELETE made with it writes a " +
      'super_admin.impersonation_action audit row, asynchronously through a job queue. Minting is audited (super_admin.impersonation_started). ' +
      'Unknown tenant → 404; the super-admin tenant → 403.',
    params: idParam('id'),
    body: z
      .strictObject({
        ttl_minutes: z
          .number()
          .int()
          .min(IMPERSONATION_TTL.minMinutes)
          .max(IMPERSONATION_TTL.maxMinutes)
          .default(IMPERSONATION_TTL.defaultMinutes)
          .describe(`Token lifetime in minutes, ${IMPERSONATION_TTL.minMinutes}..${IMPERSONATION_TTL.maxMinutes}`),
      })
      .nullish(),
    errors: [404],
    response: z.object({
      token: z.string().describe('Bearer JWT'),
      tenant_id: z.string(),
      is_impersonating: z.literal(true),
      impersonator_user_id: z.string(),
      ttl_minutes: z.number().int(),
      expires_at: timestamp,
    }),
    handler: async ({ params, body, principal, ip }) => {
      const ttl = (body as { ttl_minutes?: number } | undefined)?.ttl_minutes ?? IMPERSONATION_TTL.defaultMinutes;
      const minted = await mintImpersonationToken(ctx, { userId: principal.user!.id, actor: actorOf(principal, ip) }, params.id, ttl);
      return { ...minted, expires_at: iso(minted.expires_at) };
    },
  });
};
