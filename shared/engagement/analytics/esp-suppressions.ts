// Automatic per-provider suppressions: the delivery path counts each refusal by a mailbox provider, and a block or a deferral storm within a window raises a
// cool-down for that provider (docs/deliverability.md: Analytics).
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { providerOfAddress, providerOfMxHost, type MailboxProvider } from '../../deliverability/mailbox-providers.js';
import { countRefusal, listEspSuppressions, raiseEspSuppression, type EspSuppressionRow } from './queries.js';

/** Refusals are counted per fixed window of this length (aligned to the UTC hour). */
export const REFUSAL_WINDOW_MINUTES = 15;
/** Policy refusals (blocked, spam, reputation) from one provider within a window that raise a suppression. */
export const BLOCK_THRESHOLD = 10;
/** Temporary failures from one provider within a window that raise a suppression (a deferral storm). */
export const DEFERRAL_THRESHOLD = 50;
/** How long a raised suppression lasts unless revoked. */
export const SUPPRESSION_HOURS = 4;
/** Recent suppressions (expired or revoked) stay listed this long. */
export const RECENT_DAYS = 7;

// RFC 3463 x.7.x is "security or policy status"; providers' block replies also say so in words.
const POLICY_CODE = /^[45]\.7\.\d+$/;
const POLICY_WORDS = /\b(block(ed|list)?|blacklist(ed)?|spam|reputation|rate.?limit(ed)?|too many|poor|policy)\b/i;

export interface Refusal {
  tenantId: string;
  recipient: string;
  /** The MX host the attempt reached, when one was reached (classifies a custom domain's provider). */
  remoteHost: string | null;
  verdict: 'temporary' | 'bounce';
  smtpCode: number | null;
  enhancedCode: string | null;
  reply: string;
  at: Date;
}

/**
 * A refusal that says the provider refuses the sender (policy), not the recipient or a passing fault: a permanent
 * x.7.x refusal, or any refusal worded as a block. A temporary x.7.x alone is not one (greylisting uses 4.7.1).
 */
export function isBlock(r: Pick<Refusal, 'smtpCode' | 'enhancedCode' | 'reply'>): boolean {
  if (r.smtpCode === null) return false;
  if (POLICY_WORDS.test(r.reply)) return true;
  return r.smtpCode >= 500 && r.enhancedCode !== null && POLICY_CODE.test(r.enhancedCode);
}

export function providerOfRefusal(r: Pick<Refusal, 'recipient' | 'remoteHost'>): MailboxProvider {
  const byAddress = providerOfAddress(r.recipient);
  return byAddress !== 'other' || r.remoteHost === null ? byAddress : providerOfMxHost(r.remoteHost);
}

/**
 * Counts one refusal (in the caller's transaction, beside the attempt it belongs to) and raises a suppression when the
 * window's count reaches a threshold: BLOCK_THRESHOLD blocks, or DEFERRAL_THRESHOLD temporary failures. Refusals of
 * unknown providers (`other`) and failures without a reply are not counted: a cool-down for "everyone else" would be meaningless. One upsert per
 * refusal; the insert runs once per window at most (when the count reaches the threshold exactly).
 */
export async function noteRefusal(db: Queryable, r: Refusal): Promise<'raised' | 'counted' | 'ignored'> {
  // Without a reply (connection refused, timeout) the fault may be ours or the network's, not the provider's verdict.
  if (r.smtpCode === null) return 'ignored';
  const provider = providerOfRefusal(r);
  if (provider === 'other') return 'ignored';
  const block = isBlock(r);
  const windowMs = REFUSAL_WINDOW_MINUTES * 60_000;
  const windowStart = new Date(Math.floor(r.at.getTime() / windowMs) * windowMs);
  const counts = await countRefusal(db, { tenantId: r.tenantId, provider, windowStart, kind: block ? 'block' : 'deferral' });
  const reason = block && counts.blocks === BLOCK_THRESHOLD ? 'blocked' : !block && counts.deferrals === DEFERRAL_THRESHOLD ? 'deferral_storm' : null;
  if (reason === null) return 'counted';
  const raised = await raiseEspSuppression(db, {
    tenantId: r.tenantId,
    provider,
    reason,
    refusals: reason === 'blocked' ? counts.blocks : counts.deferrals,
    windowMinutes: REFUSAL_WINDOW_MINUTES,
    sampleReply: r.reply.slice(0, 500),
    at: r.at,
    expiresAt: new Date(r.at.getTime() + SUPPRESSION_HOURS * 3_600_000),
  });
  return raised ? 'raised' : 'counted';
}

export interface EspSuppressionItem {
  id: string;
  esp: string;
  reason: EspSuppressionRow['reason'];
  refusals: number;
  window_minutes: number;
  sample_reply: string | null;
  active: boolean;
  triggered_at: string;
  expires_at: string;
  revoked_at: string | null;
}

export async function espSuppressions(deps: { sql: Queryable; clock: Clock }, tenantId: string): Promise<{ items: EspSuppressionItem[]; total: number }> {
  const now = deps.clock.now();
  const rows = await listEspSuppressions(deps.sql, tenantId, now, new Date(now.getTime() - RECENT_DAYS * 86_400_000));
  const items = rows.map((r) => ({
    id: r.id,
    esp: r.provider,
    reason: r.reason,
    refusals: r.refusals,
    window_minutes: r.window_minutes,
    sample_reply: r.sample_reply,
    active: r.revoked_at === null && r.expires_at.getTime() > now.getTime(),
    triggered_at: r.triggered_at.toISOString(),
    expires_at: r.expires_at.toISOString(),
    revoked_at: r.revoked_at === null ? null : r.revoked_at.toISOString(),
  }));
  return { items, total: items.length };
}
