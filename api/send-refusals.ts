// How the API answers a send the outbound gates refused: a suspended tenant 403, the monthly cap 402 with its quota headers.
import { AppError } from '../shared/kernel/errors.js';
import type { Refusal } from '../shared/sending/gates/types.js';
import { quotaHeaders } from './quota-headers.js';

export function refusalError(refusal: Refusal): AppError {
  switch (refusal.reason) {
    case 'tenant_suspended':
      return new AppError('forbidden', 'the account is suspended: sending is blocked');
    case 'quota_exceeded':
      return new AppError('quota_exceeded', `the monthly send cap of ${refusal.cap} is reached`, {
        headers: quotaHeaders({ used: refusal.used, cap: refusal.cap }),
      });
  }
}
