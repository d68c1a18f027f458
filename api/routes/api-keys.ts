// API key management for the signed-in user's tenant: create (shown once), list, revoke, change scopes.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { changeScopes, createApiKey, listApiKeys, revokeKey } from '../../shared/accounts/keys/service.js';
import { SCOPES } from '../../shared/accounts/keys/scopes.js';
import type { ApiKeyRow } from '../../shared/accounts/keys/queries.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult, timestamp } from '../schemas/common.js';

const scopeList = z.array(z.string().max(64)).max(SCOPES.length * 2);

const apiKey = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  mode: z.enum(['live', 'test']),
  scopes: z.array(z.string()).describe('Empty means every scope'),
  created_at: timestamp,
  last_used_at: timestamp.nullable().describe('Updated at most once a minute'),
});

const present = (k: ApiKeyRow) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  mode: k.mode,
  scopes: k.scopes,
  created_at: iso(k.created_at),
  last_used_at: iso(k.last_used_at),
});

export const apiKeyRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/api-keys',
    auth: 'user',
    tags: ['API keys'],
    summary: 'List API keys',
    description: 'Active (non-revoked) keys of the tenant, newest first. The secret itself is never shown again after creation.',
    response: z.object({ items: z.array(apiKey) }),
    handler: async ({ principal }) => ({ items: (await listApiKeys(ctx, principal.tenant.id)).map(present) }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/api-keys',
    grantsAccess: true,
    auth: 'user',
    tags: ['API keys'],
    summary: 'Create an API key',
    description:
      `Returns the plaintext key once; only its SHA-256 hash is stored. Valid scopes: ${SCOPES.join(', ')}; ` +
      'empty or omitted grants all. mode=test keys send into the simulation and never deliver.',
    body: z.strictObject({
      name: z.string().trim().min(1).max(100),
      scopes: scopeList.optional(),
      mode: z.enum(['live', 'test']).default('live'),
    }),
    status: 201,
    response: apiKey.pick({ id: true, name: true, prefix: true, scopes: true, mode: true, created_at: true }).extend({
      key: z.string().describe('The secret key: shown only in this response'),
    }),
    handler: async ({ principal, body, ip }) => {
      const creator = { audit: actorOf(principal, ip), userId: principal.user!.id, role: principal.user!.role };
      const { row, key } = await createApiKey(ctx, principal.tenant.id, creator, body);
      return { id: row.id, key, name: row.name, prefix: row.prefix, scopes: row.scopes, mode: row.mode, created_at: iso(row.created_at) };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/api-keys/:keyID',
    auth: 'user',
    tags: ['API keys'],
    summary: 'Revoke an API key',
    description: 'The key stops working at once (401 on its next use).',
    params: idParam('keyID'),
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await revokeKey(ctx, principal.tenant.id, actorOf(principal, ip), params.keyID);
      ctx.credentials.forgetKey(params.keyID);
      return { status: 'revoked' };
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/api-keys/:keyID/scopes',
    grantsAccess: true,
    auth: 'user',
    tags: ['API keys'],
    summary: 'Change the scopes of an API key',
    description: 'Replaces the scope list without reissuing the key. An empty list grants every scope; an unknown scope gives 400.',
    params: idParam('keyID'),
    body: z.strictObject({ scopes: scopeList }),
    errors: [404],
    response: z.object({ id: z.string(), scopes: z.array(z.string()) }),
    handler: async ({ principal, params, body, ip }) => {
      const row = await changeScopes(ctx, principal.tenant.id, actorOf(principal, ip), params.keyID, body.scopes);
      ctx.credentials.forgetKey(row.id);
      return { id: row.id, scopes: row.scopes };
    },
  });
};
