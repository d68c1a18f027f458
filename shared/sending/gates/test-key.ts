// Gate 2: a test-mode key's send is accepted and recorded but never leaves the MTA (no quota, no reputation).
import type { Gate } from './types.js';

export const testKeyGate: Gate = {
  name: 'test_key',
  decide: async (_deps, send) =>
    send.mode === 'test' ? { gate: 'test_key', outcome: 'simulate', reason: 'test_key' } : { gate: 'test_key', outcome: 'continue' },
};
