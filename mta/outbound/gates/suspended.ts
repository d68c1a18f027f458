// Gate 1: a suspended tenant sends nothing (refused, whatever the key).
import { AppError } from '../../../shared/errors.js';
import type { Gate } from './types.js';

export const suspendedGate: Gate = async (_deps, send) =>
  send.tenant.status === 'suspended'
    ? { gate: 'suspended', outcome: 'refuse', error: new AppError('forbidden', 'the account is suspended: sending is blocked') }
    : { gate: 'suspended', outcome: 'continue' };
