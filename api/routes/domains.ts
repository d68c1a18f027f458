// Sending domains of the caller's tenant: add (DKIM key + records to publish), list, read, verify now, delete, rotate the DKIM key.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { claimReason } from '../../shared/deliverability/domains/claims.js';
import { SENDING_KINDS, zoneLine, type ExpectedRecord } from '../../shared/deliverability/domains/records.js';
import { getDomainRotation, listRotationsOfDomain, startRotation } from '../../shared/deliverability/domains/rotation.js';
import { createDomain, getDomain, listDomainPage, removeDomain, verifyDomainNow, type DomainDetail } from '../../shared/deliverability/domains/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';
import { dkimRotation, presentRotation } from '../schemas/dkim.js';

const TAGS = ['Domains'];

const dnsRecord = z.object({
  kind: z.enum(['spf', 'dkim', 'dmarc', 'mx']),
  type: z.enum(['TXT', 'MX']),
  host: z.string().describe('Owner name to publish at'),
  value: z.string().describe('Exact value to publish (TXT text, or the MX exchange host)'),
  priority: z.number().int().nullable().describe('MX priority (10); null for TXT'),
  zone_line: z.string().describe('The record as a zone-file line; TXT texts over 255 bytes already split into strings'),
  required_for_sending: z.boolean().describe('SPF, DKIM and DMARC must all verify before the domain can send; MX is for inbound mail'),
  verified: z.boolean(),
  found: z.string().nullable().describe('What DNS returned at the last check'),
  error: z.string().nullable().describe('Why the record did not verify at the last check'),
  verified_at: timestamp.nullable(),
  drifted_at: timestamp.nullable().describe('Last time this record stopped verifying after having verified'),
  last_checked_at: timestamp.nullable(),
});

const domain = z.object({
  id: z.string(),
  name: z.string().describe('ASCII (IDNA) form'),
  unicode_name: z.string(),
  status: z
    .enum(['pending', 'verified', 'drifted', 'superseded'])
    .describe(
      'pending: not verified yet; verified: owns the name and can send; drifted: could send until a record disappeared or changed; ' +
        'superseded: another account proved control of the name first, so this claim is closed and never verifies',
    ),
  can_send: z.boolean(),
  owned_at: timestamp
    .nullable()
    .describe('When this claim proved control of the name (its own DKIM record was found in DNS); only the owning claim can send or receive'),
  expires_at: timestamp.nullable().describe('A claim that does not own its name is removed at the first re-check after this; null once owned'),
  superseded_at: timestamp.nullable(),
  claim_reason: z.string().nullable().describe('Why this claim does not own its name (yet); null once it does'),
  verified_at: timestamp.nullable(),
  drifted_at: timestamp.nullable(),
  last_checked_at: timestamp.nullable(),
  created_at: timestamp,
  records: z.array(dnsRecord),
  dkim: z.object({
    selector: z.string().nullable().describe('Selector of the key that signs mail now'),
    algorithm: z.literal('rsa-sha256'),
    key_bits: z.number().int().nullable(),
    key_created_at: timestamp.nullable(),
    rotation: dkimRotation.nullable().describe('The rotation in flight, if any'),
  }),
});

function present(d: DomainDetail): z.input<typeof domain> {
  const canSend = d.domain.verified_at !== null;
  return {
    id: d.domain.id,
    name: d.domain.name,
    unicode_name: d.domain.unicode_name,
    status: canSend ? 'verified' : d.domain.superseded_at ? 'superseded' : d.domain.drifted_at ? 'drifted' : 'pending',
    can_send: canSend,
    owned_at: iso(d.domain.owned_at),
    expires_at: iso(d.domain.expires_at),
    superseded_at: iso(d.domain.superseded_at),
    claim_reason: claimReason(d.domain, d.records),
    verified_at: iso(d.domain.verified_at),
    drifted_at: iso(d.domain.drifted_at),
    last_checked_at: iso(d.domain.last_checked_at),
    created_at: iso(d.domain.created_at),
    records: d.records.map((r) => {
      const expected: ExpectedRecord = { kind: r.kind, type: r.type, host: r.host, value: r.expected, priority: r.priority };
      return {
        kind: r.kind,
        type: r.type,
        host: r.host,
        value: r.expected,
        priority: r.priority,
        zone_line: zoneLine(expected),
        required_for_sending: SENDING_KINDS.includes(r.kind),
        verified: r.verified,
        found: r.found,
        error: r.error,
        verified_at: iso(r.verified_at),
        drifted_at: iso(r.drifted_at),
        last_checked_at: iso(r.last_checked_at),
      };
    }),
    dkim: {
      selector: d.key?.selector ?? null,
      algorithm: 'rsa-sha256',
      key_bits: d.key?.key_bits ?? null,
      key_created_at: iso(d.key?.created_at ?? null),
      rotation: d.rotation ? presentRotation(d.rotation) : null,
    },
  };
}

const domainId = idParam('id');

export const domainRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/domains',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List sending domains',
    description: "The tenant's domains, newest first, with each record's verification state. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: domain,
    handler: async ({ principal, query }) => {
      const page = await listDomainPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/domains',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Add a sending domain',
    description:
      'Creates the domain and its first DKIM key (RSA 2048, dated selector) and answers with the exact records to publish: ' +
      'SPF (include of the Mailpath SPF host), DKIM at <selector>._domainkey, DMARC at _dmarc, and MX priority 10 to the Mailpath mail host for inbound ' +
      'mail. ' +
      'Internationalized names are stored in their ASCII (IDNA) form (UTS-46 mapping: case and full-width variants are the same name). ' +
      'Several accounts may claim the same name, and the answer never tells whether others have: the first claim whose own DKIM record is found in ' +
      'DNS owns the name ' +
      'and the other claims are superseded. A claim that does not prove control within claim_expiry_days is removed. The same account adding a name ' +
      'twice is 409. ' +
      'Then call POST /domains/{id}/verify.',
    body: z.strictObject({ name: z.string().max(300).describe('Domain name, e.g. mail.example.com') }),
    status: 201,
    errors: [409],
    response: domain,
    handler: async ({ principal, body, ip }) => present(await createDomain(ctx, principal.tenant.id, actorOf(principal, ip), body.name)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/domains/:id',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a sending domain',
    description:
      'Per record: the expected value, the value found at the last check, whether it verified and when it was last checked; plus the DKIM key and ' +
      'any rotation in flight.',
    params: domainId,
    errors: [404],
    response: domain,
    handler: async ({ principal, params }) => present(await getDomain(ctx, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/domains/:id/verify',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: "Check the domain's DNS records now",
    description:
      "Looks up every record through the configured resolvers and stores the outcome. Finding this claim's DKIM record proves control of the name: " +
      'the claim then owns it unless another claim owns it already. The domain can send once it owns the name and SPF, DKIM and DMARC all verify. ' +
      'A superseded claim is answered as it stands, without look-ups. ' +
      "A look-up that times out or fails is reported as the record's error and never verifies a record (nor un-verifies one that was verified).",
    params: domainId,
    errors: [404],
    response: domain,
    handler: async ({ principal, params, ip }) => present(await verifyDomainNow(ctx, principal.tenant.id, actorOf(principal, ip), params.id)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/domains/:id',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a sending domain',
    description:
      'Deletes the domain with its DKIM keys and rotations. It can no longer send; when it owned the name, another claim may now prove control and own it.',
    params: domainId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeDomain(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/domains/:id/dkim/rotate',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: "Rotate the domain's DKIM key",
    description:
      'Generates a new key under a new selector and answers with the rotation in state publishing and its dns_record to publish. ' +
      'The current key keeps signing until every public resolver returns the new record (checked every 30 minutes); then the new key signs ' +
      'and the old one stays published through its grace period. One rotation per domain at a time (409); only a domain that owns its name can rotate (409).',
    params: domainId,
    body: z.strictObject({ reason: z.string().trim().max(500).optional().describe('Why the key is rotated (kept in the audit log)') }),
    status: 202,
    errors: [404, 409],
    response: dkimRotation,
    handler: async ({ principal, params, body, ip }) =>
      presentRotation(await startRotation(ctx, principal.tenant.id, params.id, actorOf(principal, ip), { reason: body.reason || null, initiatedBy: 'tenant' })),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/domains/:id/dkim/rotations',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: "List the domain's DKIM rotations",
    description: 'Every rotation of the domain, newest first, including finished and rolled-back ones.',
    params: domainId,
    query: z.object({ limit: z.coerce.number().int().min(1).max(200).default(50) }),
    errors: [404],
    response: z.object({ items: z.array(dkimRotation) }),
    handler: async ({ principal, params, query }) => ({
      items: (await listRotationsOfDomain(ctx, principal.tenant.id, params.id, query.limit)).map(presentRotation),
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/domains/:id/dkim/rotations/:rotationID',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read one DKIM rotation',
    description: 'A rotation of the domain, with the last propagation check per public resolver.',
    params: z.object({ id: z.string().max(64), rotationID: z.string().max(64) }),
    errors: [404],
    response: dkimRotation,
    handler: async ({ principal, params }) => presentRotation(await getDomainRotation(ctx, principal.tenant.id, params.id, params.rotationID)),
  });
};
