// Gate 4: a recipient on the tenant's suppression list is dropped.
import { isSuppressed } from '../../../shared/suppressions/service.js';
import type { Gate } from './types.js';

export const suppressionGate: Gate = async (deps, send) =>
  (await (deps.isSuppressed ? deps.isSuppressed(send.tenant.id, send.to) : isSuppressed(deps.db, send.tenant.id, send.to)))
    ? { gate: 'suppression', outcome: 'drop', reason: 'suppressed' }
    : { gate: 'suppression', outcome: 'continue' };
