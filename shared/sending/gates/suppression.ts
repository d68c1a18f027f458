// Gate 4: a recipient on the tenant's suppression list is dropped.
import type { Gate } from './types.js';

export const suppressionGate: Gate = {
  name: 'suppression',
  decide: async (deps, send) =>
    (await deps.lookups.isSuppressed(send.tenant.id, send.to))
      ? { gate: 'suppression', outcome: 'drop', reason: 'suppressed' }
      : { gate: 'suppression', outcome: 'continue' },
};
