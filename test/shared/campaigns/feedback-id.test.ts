// The Feedback-ID's tenant tag: stable per tenant (feedback loops aggregate by it), different between tenants and keys, and no trace of the tenant's id.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { feedbackId, tenantFeedbackTag } from '../../../shared/campaigns/feedback-id.js';
import { copyOf } from '../../../shared/deliverability/seed-mailboxes/placement.js';

t.test('the tag is opaque, stable per tenant and key, and the seed list still reads the campaign back', async (t) => {
  const key = randomBytes(32);
  const tenant = randomUUID();
  const tag = tenantFeedbackTag(key, tenant);
  t.match(tag, /^[0-9a-f]{20}$/);
  t.equal(tenantFeedbackTag(key, tenant), tag, 'stable');
  t.equal(tenantFeedbackTag(key, tenant.toUpperCase()), tag, 'however the id is spelled');
  t.not(tenantFeedbackTag(key, randomUUID()), tag, 'another tenant, another tag');
  t.not(tenantFeedbackTag(randomBytes(32), tenant), tag, 'another key, another tag');
  const campaign = randomUUID();
  const header = feedbackId(key, campaign, tenant);
  t.equal(header, `${campaign}:${tag}:campaign:mailpath`);
  for (const id of [tenant, tenant.replace(/-/g, '')]) t.notOk(header.includes(id), 'the tenant id is not in it');
  t.same(copyOf(new Map([['feedback-id', header]])), { sendId: null, campaignId: campaign });
});
