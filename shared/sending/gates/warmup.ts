// Gate 7: the warm-up cap of the sending domain for the UTC day (allow and count, defer to 00:00 UTC, or drop a suppressed recipient).
import { releaseDaily } from '../../deliverability/warmup/queries.js';
import { warmupGate as evaluate } from '../../deliverability/warmup/gate.js';
import { utcDay } from '../../deliverability/warmup/tiers.js';
import type { Gate } from './types.js';

export const warmupGate: Gate = {
  name: 'warmup',
  decide: async (deps, send) => {
    const decision = await evaluate(
      deps.db,
      deps.warmup,
      {
        tenantId: send.tenant.id,
        domainId: send.domainId,
        at: send.at,
        // Asked only over the cap; suppression wins over deferral.
        recipientSuppressed: () => deps.lookups.isSuppressed(send.tenant.id, send.to),
      },
      deps.counters,
    );
    const detail = { tier: decision.tier, cap: decision.cap };
    switch (decision.outcome) {
      case 'allow':
        return { gate: 'warmup', outcome: 'continue', detail: { ...detail, sent_today: decision.sentToday } };
      case 'defer':
        return { gate: 'warmup', outcome: 'defer', until: decision.until, detail: decision.paused ? { ...detail, paused: true } : detail };
      case 'drop':
        return { gate: 'warmup', outcome: 'drop', reason: 'suppressed' };
    }
  },
  undo: (deps, send) => releaseDaily(deps.db, { tenantId: send.tenant.id, domainId: send.domainId, day: utcDay(send.at) }),
};
