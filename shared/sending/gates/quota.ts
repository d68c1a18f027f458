// Gate 5: the monthly plan cap; a live send is counted here, and at the cap it is refused with the figures.
import { releaseQuota } from '../../limits/quota/usage.js';
import type { Gate } from './types.js';

export const quotaGate: Gate = {
  name: 'quota',
  decide: async (deps, send) => {
    const { used, cap } = await deps.counters.takeQuota(send.tenant.id, send.at);
    if (used === undefined) return { gate: 'quota', outcome: 'refuse', refusal: { reason: 'quota_exceeded', used: cap, cap } };
    return { gate: 'quota', outcome: 'continue', detail: { used, cap } };
  },
  undo: (deps, send) => releaseQuota(deps.db, send.tenant.id, send.at),
};
