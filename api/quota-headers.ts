// The spec's X-Quota-* response headers of the send routes (POST /transactional/send, POST /campaigns/{id}/send).
import type { FastifyReply } from 'fastify';
import { AppError } from '../shared/kernel/errors.js';
import { monthlyUsage, QUOTA_WARNING_SHARE, type Quota } from '../shared/limits/quota/usage.js';
import type { ApiContext } from './context.js';

/** Used, cap and remaining; the warning flag at 80 % of the cap or more. */
export function quotaHeaders(q: Quota): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Quota-Used': String(q.used),
    'X-Quota-Cap': String(q.cap),
    'X-Quota-Remaining': String(Math.max(0, q.cap - q.used)),
  };
  if (q.cap > 0 && q.used >= q.cap * QUOTA_WARNING_SHARE) headers['X-Quota-Warning'] = '1';
  return headers;
}

/**
 * Puts the tenant's usage of this month on the reply, read now: for answers that did not count a send themselves
 * (a campaign's sends are counted as its fan-out queues them) and for refusals, which are send-path answers too.
 * An error that brings its own (a 402) keeps them; when the read fails the answer goes out without them.
 */
export async function replyWithQuota(ctx: ApiContext, reply: FastifyReply, tenantId: string, err?: unknown): Promise<void> {
  if (err instanceof AppError && err.headers['X-Quota-Cap'] !== undefined) return;
  const usage = await monthlyUsage(ctx.sql, tenantId, ctx.clock.now()).catch(() => undefined);
  if (usage) reply.headers(quotaHeaders(usage));
}
