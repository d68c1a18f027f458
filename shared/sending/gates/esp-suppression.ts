// Gate 6 (after the quota): a provider that refused the tenant's mail as a block or a deferral storm (an automatic per-provider
// suppression, /analytics/esp-suppressions) gets no new mail from the tenant until the suppression expires: the send is
// deferred to then, instead of adding to the refusals that raised it.
import { providerOfAddress } from '../../deliverability/mailbox-providers.js';
import type { Gate } from './types.js';

export const espSuppressionGate: Gate = {
  name: 'esp_suppression',
  decide: async (deps, send) => {
    // Classified by the recipient's domain name: a custom domain hosted by a provider is not held (no DNS on the send path).
    const provider = providerOfAddress(send.to);
    if (provider === 'other') return { gate: 'esp_suppression', outcome: 'continue' };
    const until = await deps.espHolds.heldUntil(send.tenant.id, provider, send.at);
    return until ? { gate: 'esp_suppression', outcome: 'defer', until, detail: { provider } } : { gate: 'esp_suppression', outcome: 'continue' };
  },
};
