// Response shapes of DKIM rotations, shared by the tenant's domain routes and the super-admin rotation routes.
import { z } from 'zod';
import { dnsPublishStatus } from '../../shared/deliverability/domains/rotation.js';
import type { RotationView } from '../../shared/deliverability/domains/rotation-queries.js';
import { dkimRecord, zoneLine } from '../../shared/deliverability/domains/records.js';
import { iso, timestamp } from './common.js';

export const dkimRotation = z.object({
  id: z.string(),
  tenant_id: z.string(),
  domain_id: z.string(),
  domain: z.string(),
  state: z
    .enum(['pending', 'publishing', 'active', 'retiring', 'retired'])
    .describe(
      'pending: new key generated; publishing: waiting until every public resolver returns the new record; ' +
        'active: the new key signs, the old one stays published until retire_after; retired: finished or rolled back (terminal)',
    ),
  reason: z.string().nullable(),
  initiated_by: z.enum(['tenant', 'admin', 'auto']),
  old_selector: z.string().nullable(),
  new_selector: z.string(),
  dns_provider_managed: z.boolean(),
  dns_record: z
    .object({ type: z.literal('TXT'), host: z.string(), value: z.string(), zone_line: z.string() })
    .optional()
    .describe('The record to publish; present while publishing and the DNS is not provider-managed'),
  dns_published_at: timestamp.nullable().describe('When an operator confirmed the record is published'),
  dns_publish_status: z.enum(['awaiting_publication', 'provider_managed', 'confirmed_published', 'propagated']),
  error: z.string().nullable().describe('Why the last propagation check did not activate the rotation'),
  resolver_results: z.array(z.object({ resolver: z.string(), published: z.boolean(), found: z.string().nullable(), error: z.string().nullable() })),
  last_checked_at: timestamp.nullable(),
  created_at: timestamp,
  updated_at: timestamp,
  activated_at: timestamp.nullable(),
  retire_after: timestamp.nullable().describe('When the old key stops being published (end of its grace period)'),
  retired_at: timestamp.nullable(),
  rolled_back_at: timestamp.nullable(),
});

export function presentRotation(r: RotationView): z.input<typeof dkimRotation> {
  const record = dkimRecord(r.domain_name, { selector: r.new_selector, publicKey: r.new_public_key });
  return {
    id: r.id,
    tenant_id: r.tenant_id,
    domain_id: r.domain_id,
    domain: r.domain_name,
    state: r.state,
    reason: r.reason,
    initiated_by: r.initiated_by,
    old_selector: r.old_selector,
    new_selector: r.new_selector,
    dns_provider_managed: r.dns_provider_managed,
    ...(r.state === 'publishing' && !r.dns_provider_managed
      ? { dns_record: { type: 'TXT' as const, host: record.host, value: record.value, zone_line: zoneLine(record) } }
      : {}),
    dns_published_at: iso(r.dns_published_at),
    dns_publish_status: dnsPublishStatus(r) as z.input<typeof dkimRotation>['dns_publish_status'],
    error: r.error,
    resolver_results: r.resolver_results,
    last_checked_at: iso(r.last_checked_at),
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
    activated_at: iso(r.activated_at),
    retire_after: iso(r.retire_after),
    retired_at: iso(r.retired_at),
    rolled_back_at: iso(r.rolled_back_at),
  };
}
