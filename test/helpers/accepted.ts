// Narrows a send use-case outcome to the accepted send: a gate's refusal fails the test, naming it.
import { isRefused, type Refused } from '../../shared/sending/accept.js';

export function accepted<T extends object>(outcome: T | Refused): T {
  if (isRefused(outcome)) throw new Error(`the send was refused: ${JSON.stringify(outcome.refusal)}`);
  return outcome;
}
