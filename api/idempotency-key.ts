// The Idempotency-Key request header of the send routes (POST /transactional/send, POST /campaigns/{id}/send): its
// rule, read from a request here and documented from the same pattern in the OpenAPI document (api/route.ts).
import { validationError } from '../shared/kernel/errors.js';

/** 1..255 printable ASCII characters, no spaces. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7e]{1,255}$';
const IDEMPOTENCY_KEY = new RegExp(IDEMPOTENCY_KEY_PATTERN);

/** The header's key, undefined when absent; 422 naming the header when it breaks the rule or is sent twice. */
export function idempotencyKeyOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || !IDEMPOTENCY_KEY.test(value))
    throw validationError('Idempotency-Key', 'must be 1..255 printable ASCII characters without spaces');
  return value;
}
