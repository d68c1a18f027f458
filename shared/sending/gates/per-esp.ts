// Gate 6: the per-(tenant, mailbox provider) sub-cap inside the tier cap (before the warm-up gate, so a send it defers takes no warm-up allowance): counted
// and logged when over (advisory), or deferred to 00:00 UTC when WARMUP_PER_ESP_ENFORCE is on.
import { providerOfAddress } from '../../deliverability/mailbox-providers.js';
import { releaseEsp } from '../../deliverability/warmup/per-esp-queries.js';
import { nextUtcMidnight, utcDay } from '../../deliverability/warmup/tiers.js';
import type { Gate } from './types.js';

export const perEspGate: Gate = {
  name: 'per_esp',
  decide: async (deps, send) => {
    const provider = providerOfAddress(send.to);
    const day = utcDay(send.at);
    const enforce = deps.warmup.per_esp_enforce === true;
    const took = await deps.counters.takeEsp({ tenantId: send.tenant.id, provider, day, enforce });
    if (took.cap === null) return { gate: 'per_esp', outcome: 'continue', detail: { provider, per_esp_limit: null } };
    const over = took.sent === null || took.sent > took.cap;
    const detail = { provider, per_esp_limit: took.cap, enforced: enforce, ...(took.sent !== null ? { sent_today: took.sent } : {}) };
    if (!over) return { gate: 'per_esp', outcome: 'continue', detail };
    await deps.counters.countOverCap({ tenantId: send.tenant.id, domainId: send.domainId, provider, day, enforced: enforce });
    if (!enforce) return { gate: 'per_esp', outcome: 'continue', detail: { ...detail, would_have_throttled: true } };
    return { gate: 'per_esp', outcome: 'defer', until: nextUtcMidnight(send.at), detail };
  },
  // Counted only when the send was (advisory, or below the cap); an over-cap advisory count stays as "would have throttled".
  undo: async (deps, send) => {
    const day = utcDay(send.at);
    await releaseEsp(deps.db, { tenantId: send.tenant.id, provider: providerOfAddress(send.to), day });
  },
};
