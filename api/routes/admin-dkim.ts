// Super-admin DKIM rotation routes: in-flight rotations, operator confirm and rollback, and the rotation audit across tenants.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { listRotationAudit } from '../../shared/deliverability/domains/rotation-audit.js';
import { confirmPublished, listRotations, rollbackRotation, startRotationAsAdmin } from '../../shared/deliverability/domains/rotation.js';
import type { RotationView } from '../../shared/deliverability/domains/rotation-queries.js';
import type { DomainDeps } from '../../shared/deliverability/domains/deps.js';
import type { AuditActor } from '../../shared/operations/audit/log.js';
import { defineRoute } from '../route.js';
import { idParam, iso, queryFlag, timestamp } from '../schemas/common.js';
import { dkimRotation, presentRotation } from '../schemas/dkim.js';

const TAGS = ['Super-admin: DKIM rotation'];

const adminPage = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('1..500, default 100'),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  tenant_id: z.uuid().optional(),
});

const transitionResult = z.object({
  id: z.string(),
  state: dkimRotation.shape.state,
  dns_published_at: timestamp.nullable(),
  error: z.string().nullable(),
});

const auditItem = z.object({
  id: z.string(),
  at: timestamp,
  action: z.string().describe('dkim.rotation.<pending|publishing|confirm_published|active|retired|rolled_back>'),
  tenant_id: z.string().nullable(),
  rotation_id: z.string().nullable(),
  actor_type: z.string(),
  actor_id: z.string().nullable(),
  domain_id: z.string().nullable(),
  domain: z.string().nullable(),
  from_state: z.string().nullable(),
  to_state: z.string().nullable(),
  old_selector: z.string().nullable(),
  new_selector: z.string().nullable(),
  reason: z.string().nullable(),
  dns_publish_status: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).describe('The whole audit payload'),
});

const text = (v: unknown) => (typeof v === 'string' ? v : null);

export const adminDkimRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/dkim-rotations',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'List DKIM rotations in flight',
    description: 'Rotations across tenants, newest first: those not retired, or every one with include_retired=true.',
    query: adminPage.extend({ include_retired: queryFlag.default(false).describe('Include retired (finished or rolled-back) rotations') }),
    response: z.object({ items: z.array(dkimRotation), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ query }) => ({
      items: (
        await listRotations(ctx.sql, {
          limit: query.limit,
          offset: query.offset,
          includeRetired: query.include_retired,
          ...(query.tenant_id ? { tenantId: query.tenant_id } : {}),
        })
      ).map(presentRotation),
      limit: query.limit,
      offset: query.offset,
    }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/dkim-rotations',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Start a DKIM rotation on any domain',
    description:
      "Starts a rotation on a tenant's domain (initiated_by admin), e.g. when a key may be compromised. Same rules as the tenant's rotate: " +
      'the new key signs only once every public resolver returns it; 409 while another rotation of the domain is in flight.',
    body: z.strictObject({ domain_id: z.string().max(64), reason: z.string().trim().max(500).optional() }),
    status: 202,
    errors: [404, 409],
    response: dkimRotation,
    handler: async ({ body, principal, ip }) => presentRotation(await startRotationAsAdmin(ctx, body.domain_id, actorOf(principal, ip), body.reason || null)),
  });

  /** An operator transition on one rotation: same shape for confirm and rollback. */
  const transition = (verb: string, summary: string, description: string, apply: (deps: DomainDeps, id: string, actor: AuditActor) => Promise<RotationView>) =>
    defineRoute(app, {
      method: 'POST',
      url: `/admin/dkim-rotations/:id/${verb}`,
      auth: 'super_admin',
      tags: TAGS,
      summary,
      description,
      params: idParam('id'),
      errors: [404, 409],
      response: transitionResult,
      handler: async ({ params, principal, ip }) => {
        const r = await apply(ctx, params.id, actorOf(principal, ip));
        return { id: r.id, state: r.state, dns_published_at: iso(r.dns_published_at), error: r.error };
      },
    });

  transition(
    'confirm-published',
    'Confirm the new DKIM record is published',
    'Stamps dns_published_at and clears error. The rotation stays publishing: it activates only when the rotator sees the record on every public resolver. ' +
      '409 unless the rotation is publishing (a retired one included).',
    confirmPublished,
  );

  transition(
    'rollback',
    'Roll back a DKIM rotation',
    'Moves any rotation that is not retired to retired. Before activation the new key is discarded and the existing key never stopped signing; ' +
      'after activation (old key still published in its grace period) the old key signs again. 409 on a retired rotation.',
    rollbackRotation,
  );

  defineRoute(app, {
    method: 'GET',
    url: '/admin/dkim/rotations',
    // Derived, it would be getAdminDkimRotations: the same as GET /admin/dkim-rotations's.
    operationId: 'getAdminDkimRotationAudit',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'DKIM rotation audit across tenants',
    description: 'Every audited rotation transition, newest first, with old and new selector, reason and DNS-publish status.',
    query: adminPage.extend({
      domain_id: z.uuid().optional(),
      since: z.iso.datetime({ offset: true }).optional().describe('Only rows at or after this instant'),
    }),
    response: z.object({ items: z.array(auditItem), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ query }) => {
      const rows = await listRotationAudit(ctx.sql, {
        limit: query.limit,
        offset: query.offset,
        tenantId: query.tenant_id,
        domainId: query.domain_id,
        since: query.since ? new Date(query.since) : undefined,
      });
      return {
        items: rows.map((r) => ({
          id: r.id,
          at: iso(r.created_at),
          action: r.action,
          tenant_id: r.tenant_id,
          rotation_id: r.resource_id,
          actor_type: r.actor_type,
          actor_id: r.actor_id,
          domain_id: text(r.metadata['domain_id']),
          domain: text(r.metadata['domain']),
          from_state: text(r.metadata['from_state']),
          to_state: text(r.metadata['to_state']),
          old_selector: text(r.metadata['old_selector']),
          new_selector: text(r.metadata['new_selector']),
          reason: text(r.metadata['reason']),
          dns_publish_status: text(r.metadata['dns_publish_status']),
          metadata: r.metadata,
        })),
        limit: query.limit,
        offset: query.offset,
      };
    },
  });
};
