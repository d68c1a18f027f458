// The spec's X-Quota-* response headers of the send routes.
import type { Quota } from '../shared/quota/usage.js';

/** Used, cap and remaining; the warning flag at 80 % of the cap or more. */
export function quotaHeaders(q: Quota): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Quota-Used': String(q.used),
    'X-Quota-Cap': String(q.cap),
    'X-Quota-Remaining': String(Math.max(0, q.cap - q.used)),
  };
  if (q.cap > 0 && q.used >= q.cap * 0.8) headers['X-Quota-Warning'] = '1';
  return headers;
}
