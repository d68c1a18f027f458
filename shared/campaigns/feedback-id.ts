// The Feedback-ID header of campaign mail (Gmail's feedback loop aggregates complaints by its fields): the campaign and an opaque tag of the tenant, never
// the tenant's id.
import { createHmac } from 'node:crypto';

/** Told apart from every other use of the key (the link tokens' MACs start with a one-byte purpose). */
const LABEL = 'mailpath feedback-id tenant tag v1\0';

/**
 * The tenant's tag: 80 bits of an HMAC of its id under the link-token key (hex). The same for every message of the
 * tenant for as long as the key stands, so feedback loops aggregate by it; no recipient can tell the tenant's id
 * (or another tenant's tag) from it.
 */
export function tenantFeedbackTag(key: Buffer, tenantId: string): string {
  return createHmac('sha256', key).update(LABEL).update(tenantId.toLowerCase()).digest('hex').slice(0, 20);
}

/** `<campaign id>:<tenant tag>:campaign:mailpath` (the seed-list placement reads the campaign back: shared/deliverability/seed-mailboxes/placement.ts). */
export function feedbackId(key: Buffer, campaignId: string, tenantId: string): string {
  return `${campaignId}:${tenantFeedbackTag(key, tenantId)}:campaign:mailpath`;
}
