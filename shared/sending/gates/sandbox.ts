// Gate 3: a sandbox tenant's sends are intercepted into the simulated-sends store.
import type { Gate } from './types.js';

export const sandboxGate: Gate = {
  name: 'sandbox',
  decide: async (_deps, send) =>
    send.tenant.is_sandbox ? { gate: 'sandbox', outcome: 'simulate', reason: 'sandbox' } : { gate: 'sandbox', outcome: 'continue' },
};
