// Deliverability per mailbox provider over the last 30 days: outcome counts and rates per ESP (recipient domains classified by name or MX) and a 0..100
// score by the trust-score formula.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { MAILBOX_PROVIDERS, type MailboxProvider } from '../../deliverability/mailbox-providers.js';
import { trustScore, type TrustTier } from '../reputation/trust-score.js';
import type { ProviderClassifier } from './provider-classifier.js';
import { domainOutcomes } from './queries.js';

export const ESP_WINDOW_DAYS = 30;

export interface EspScore {
  esp: MailboxProvider;
  sent: number;
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
  engaged: number;
  delivery_rate: number | null;
  bounce_rate: number | null;
  complaint_rate: number | null;
  engagement_rate: number | null;
  score: number | null;
  tier: TrustTier | null;
}

const rate = (n: number, d: number) => (d === 0 ? null : Math.round(Math.min(1, n / d) * 10_000) / 10_000);

/**
 * Per provider: delivery_rate = delivered / (delivered + bounced), bounce_rate = bounced / (delivered + bounced),
 * complaint_rate = complained / delivered, engagement_rate = engaged / delivered (engaged: sends with a human open or
 * click, counted per hour, capped at 1). The score is the trust score of those rates; null without outcomes. deferred
 * counts deferral events (a send put off twice counts twice) and is in no rate: a deferral is not an outcome yet.
 * Every provider is listed: scored ones by score descending (ties by name), then unscored ones, `other` always last.
 * tenantId null: every tenant's mail together (the platform overview).
 */
export async function espScores(
  deps: { sql: Queryable; clock: Clock; classifier: ProviderClassifier },
  tenantId: string | null,
): Promise<{ items: EspScore[]; window_end: string }> {
  const until = deps.clock.now();
  const since = new Date(until.getTime() - ESP_WINDOW_DAYS * 86_400_000);
  const rows = await domainOutcomes(deps.sql, tenantId, since, until);
  const providers = await deps.classifier.classify(rows.map((r) => r.domain));
  const totals = new Map(MAILBOX_PROVIDERS.map((p) => [p, { sent: 0, delivered: 0, deferred: 0, bounced: 0, complained: 0, engaged: 0 }]));
  for (const r of rows) {
    const t = totals.get(providers.get(r.domain) ?? 'other')!;
    t.sent += r.sent;
    t.delivered += r.delivered;
    t.deferred += r.deferred;
    t.bounced += r.bounced;
    t.complained += r.complained;
    t.engaged += r.engaged;
  }
  const items = MAILBOX_PROVIDERS.map((esp): EspScore => {
    const t = totals.get(esp)!;
    const outcomes = t.delivered + t.bounced;
    const rates = {
      delivery_rate: rate(t.delivered, outcomes),
      bounce_rate: rate(t.bounced, outcomes),
      complaint_rate: rate(t.complained, t.delivered),
      engagement_rate: rate(t.engaged, t.delivered),
    };
    const score = trustScore(rates);
    return { esp, ...t, ...rates, score: score?.score ?? null, tier: score?.tier ?? null };
  });
  items.sort((a, b) => {
    if ((a.esp === 'other') !== (b.esp === 'other')) return a.esp === 'other' ? 1 : -1;
    if ((a.score === null) !== (b.score === null)) return a.score === null ? 1 : -1;
    return (b.score ?? 0) - (a.score ?? 0) || a.esp.localeCompare(b.esp);
  });
  return { items, window_end: until.toISOString() };
}
