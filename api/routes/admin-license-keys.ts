// Super-admin license keys: list, issue, revoke one, revoke in bulk. What a key validates is in shared/accounts/licenses/validate.ts (and the public routes
// of api/routes/license.ts).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, type Principal } from '../../shared/accounts/auth/principal.js';
import {
  bulkRevokeLicenseKeys,
  createLicenseKey,
  MAX_BULK_LICENSE_KEYS,
  revokeLicenseKey,
  type LicenseAdminCaller,
  listLicenseKeys,
} from '../../shared/accounts/licenses/admin.js';
import type { LicenseKeyRow } from '../../shared/accounts/licenses/queries.js';
import type { Clock } from '../../shared/kernel/clock.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: license keys'];
/** A license key is a compact JWS of a few hundred characters; an id is a UUID. */
const MAX_KEY_LENGTH = 1000;

const keyRef = z.string().min(1).max(MAX_KEY_LENGTH);

const licenseKey = z.object({
  id: z.string().describe('The key id (also its jti claim); revocation accepts it in place of the key'),
  key: z.string().describe('The license key: a compact JWS (EdDSA, typ mailpath-license+jwt) to hand to the self-hosted instance'),
  plan_id: z.string().describe('The plan the key entitles'),
  tenant_id: z.string().nullable().describe('The tenant the key is issued to; null for a key not bound to a tenant'),
  status: z.enum(['active', 'revoked', 'expired']).describe('revoked wins over expired; active keys validate'),
  expires_at: timestamp.nullable().describe('The end of the entitlement; null: no expiry'),
  revoked_at: timestamp.nullable(),
  kid: z.string().describe('The signing key that signed it (GET /license/public-key)'),
  created_by_user_id: z.string().nullable(),
  created_at: timestamp,
});

function present(row: LicenseKeyRow, now: Date) {
  const expired = row.expires_at !== null && row.expires_at.getTime() <= now.getTime();
  return {
    id: row.id,
    key: row.key,
    plan_id: row.plan_id,
    tenant_id: row.tenant_id,
    status: row.revoked_at ? ('revoked' as const) : expired ? ('expired' as const) : ('active' as const),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
    kid: row.signing_kid,
    created_by_user_id: row.created_by_user_id,
    created_at: iso(row.created_at),
  };
}

function callerOf(principal: Principal, ip: string): LicenseAdminCaller {
  return { actor: actorOf(principal, ip), userId: principal.user?.id ?? null };
}

const presentAt = (clock: Clock) => (row: LicenseKeyRow) => present(row, clock.now());

export const adminLicenseKeyRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/license-keys',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'List license keys',
    description:
      'License keys, newest first, with their status (active, revoked, expired). Optional tenant_id filter; paged with limit (1..500, default 100) and offset.',
    query: z.object({
      tenant_id: z.uuid().optional().describe('Only the keys issued to this tenant'),
      limit: z.coerce.number().int().min(1).max(500).default(100).describe('Page size, 1..500'),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    }),
    response: z.object({ items: z.array(licenseKey), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ query }) => {
      const page = await listLicenseKeys(ctx.sql, { limit: query.limit, offset: query.offset }, { tenantId: query.tenant_id });
      return { items: page.items.map(presentAt(ctx.clock)), total: page.total, limit: query.limit, offset: query.offset };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/license-keys',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Issue a license key',
    description:
      "Issues a license key: a self-hosted Mailpath's entitlement to a plan, optionally bound to a tenant and an expiry, signed with " +
      "this Mailpath's Ed25519 key (POST /license/validate checks it). Unknown plan_id or tenant_id, or an expires_at not in the future → 422. " +
      'The key is shown here and in the list. Audited (super_admin.license_key_created).',
    body: z.strictObject({
      plan_id: z.string().min(1).max(64).describe('The plan the key entitles (a plan id such as pro)'),
      tenant_id: z.string().max(64).nullish().describe('The tenant the key is issued to'),
      expires_at: z.iso.datetime({ offset: true }).nullish().describe('RFC 3339 end of the entitlement; omitted: no expiry'),
    }),
    status: 201,
    response: licenseKey,
    handler: async ({ body, principal, ip }) => {
      const row = await createLicenseKey(ctx, callerOf(principal, ip), {
        plan_id: body.plan_id,
        tenant_id: body.tenant_id,
        expires_at: body.expires_at ? new Date(body.expires_at) : null,
      });
      return present(row, ctx.clock.now());
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/license-keys/bulk/revoke',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Revoke license keys in bulk',
    description:
      `Revokes each key (the key itself or its id), at most ${MAX_BULK_LICENSE_KEYS} (more → 422). Per-row results, HTTP 200 whatever the rows: ` +
      'revoked; already_revoked (nothing changes, no new audit row); not_found. Repeated entries are done once. ' +
      'Every audit row of the request carries its bulk_request_id.',
    body: z.strictObject({
      keys: z.array(keyRef).min(1).max(MAX_BULK_LICENSE_KEYS).describe(`License keys or key ids, 1..${MAX_BULK_LICENSE_KEYS}`),
    }),
    response: z.object({
      bulk_request_id: z.string(),
      results: z.array(
        z.object({
          key: z.string().describe('As given'),
          id: z.string().nullable().describe('The key id; null when not found'),
          status: z.enum(['revoked', 'already_revoked', 'not_found']),
        }),
      ),
      revoked: z.number().int(),
      already_revoked: z.number().int(),
      not_found: z.number().int(),
    }),
    handler: ({ body, principal, ip }) => bulkRevokeLicenseKeys(ctx, callerOf(principal, ip), body.keys),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/license-keys/:key/revoke',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Revoke a license key',
    description:
      'Sets revoked_at: the key fails its next validation (POST /license/validate answers valid false, reason revoked). {key} is the key ' +
      'itself or its id. Audited (super_admin.license_key_revoked); a key already revoked answers status already_revoked and writes no audit row. ' +
      'Unknown → 404.',
    params: z.object({ key: keyRef.describe('The license key or its id') }),
    errors: [404],
    response: z.object({ status: z.enum(['revoked', 'already_revoked']) }),
    handler: async ({ params, principal, ip }) => ({ status: (await revokeLicenseKey(ctx, callerOf(principal, ip), params.key)).status }),
  });
};
