// Public license routes a self-hosted Mailpath calls: validate a license key (signature, expiry, revocation) and fetch the public key to check signatures
// offline.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { currentSigningKey } from '../../shared/accounts/licenses/signing-key.js';
import { validateLicenseKey } from '../../shared/accounts/licenses/validate.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Licenses'];

export const licenseRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'POST',
    url: '/license/validate',
    auth: 'public',
    tags: TAGS,
    summary: 'Validate a license key',
    description:
      "Says whether a license key entitles its holder (a self-hosted Mailpath) to its plan now. Checked in order: the key's shape (a compact JWS, " +
      "typ mailpath-license+jwt, alg EdDSA), its Ed25519 signature by this Mailpath's signing key, its expiry, then its record (revoked, or no " +
      'longer on record because its tenant was deleted). A key that is not valid is still a 200 answer: valid false with the reason ' +
      '(malformed, invalid_signature, expired, revoked, unknown). Revocation applies at the next validation.',
    body: z.strictObject({ key: z.string().min(1).max(4000).describe('The license key') }),
    response: z.object({
      valid: z.boolean(),
      reason: z.enum(['malformed', 'invalid_signature', 'expired', 'revoked', 'unknown']).nullable().describe('Why the key is not valid; null when valid'),
      license: z
        .object({
          id: z.string(),
          plan_id: z.string().describe('The plan the holder is entitled to'),
          tenant_id: z.string().nullable(),
          issued_at: timestamp,
          expires_at: timestamp.nullable(),
          issuer: z.string().describe('The public URL of the Mailpath that issued it'),
        })
        .nullable()
        .describe('The signed claims when valid; null otherwise'),
    }),
    handler: async ({ body }) => {
      const result = await validateLicenseKey(ctx, body.key);
      if (!result.valid) return { valid: false, reason: result.reason, license: null };
      const c = result.license;
      return { valid: true, reason: null, license: { ...c, issued_at: iso(c.issued_at), expires_at: iso(c.expires_at) } };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/license/public-key',
    auth: 'public',
    tags: TAGS,
    summary: 'The license signing public key',
    description:
      "The Ed25519 public key (a JWK) license keys are signed with, so a self-hosted instance can check a key's signature and expiry " +
      "offline with any JOSE library (alg EdDSA; the kid is in the key's header). Revocation is only seen online, through POST /license/validate.",
    response: z.object({
      kid: z.string(),
      alg: z.literal('EdDSA'),
      jwk: z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.string() }),
    }),
    handler: async () => {
      const key = await currentSigningKey(ctx);
      return { kid: key.kid, alg: 'EdDSA' as const, jwk: { ...key.jwk, kid: key.kid, alg: 'EdDSA', use: 'sig' } };
    },
  });
};
