// Gate 5: the monthly plan cap; a live send is counted here, and at the cap the request is refused (402).
import { AppError } from '../../../shared/errors.js';
import { consumeMonthly, quotaHeaders } from '../../../shared/quota/usage.js';
import type { Gate } from './types.js';

export const quotaGate: Gate = async (deps, send) => {
  const { used, cap } = deps.counters ? await deps.counters.takeQuota(send.tenant.id, send.at) : await consumeMonthly(deps.db, send.tenant.id, send.at);
  if (used === undefined) {
    return {
      gate: 'quota',
      outcome: 'refuse',
      error: new AppError('quota_exceeded', `the monthly send cap of ${cap} is reached`, { headers: quotaHeaders({ used: cap, cap }) }),
    };
  }
  return { gate: 'quota', outcome: 'continue', detail: { used, cap } };
};
