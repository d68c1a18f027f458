// Gate 1: a suspended tenant sends nothing (refused, whatever the key).
import type { Gate } from './types.js';

export const suspendedGate: Gate = {
  name: 'suspended',
  decide: async (_deps, send) =>
    send.tenant.status === 'suspended'
      ? { gate: 'suspended', outcome: 'refuse', refusal: { reason: 'tenant_suspended' } }
      : { gate: 'suspended', outcome: 'continue' },
};
