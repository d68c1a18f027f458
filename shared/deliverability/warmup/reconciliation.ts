// The per-ESP reconciliation report: per (sending domain, mailbox provider) the tier cap, the sub-cap, the effective cap and what was sent and would have
// been throttled.
import type { WarmupConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { MAILBOX_PROVIDERS, providerOfDomain } from '../mailbox-providers.js';
import { espCaps, overCapCounts, sendsByRecipientDomain } from './per-esp-queries.js';
import { tenantWarmups } from './ramp-queries.js';
import { capForTier, utcDay } from './tiers.js';

export interface ReconciliationItem {
  domain_id: string;
  domain: string;
  provider: string;
  tier: number;
  per_domain_limit: number;
  per_esp_limit: number | null;
  effective_cap: number;
  sent_24h: number;
  would_have_throttled_count: number;
  /** Of those, deferred because enforcement was on. */
  deferred_count: number;
}

/**
 * Rows for each verified domain of the tenant and each provider that has a sub-cap, a send in the last
 * 24 hours or an over-cap send today, in provider order. effective_cap = min(per_domain_limit,
 * per_esp_limit), or the domain's limit alone without a sub-cap. would_have_throttled_count counts
 * the current UTC day (the window the sub-caps apply to).
 */
export async function reconciliation(db: Queryable, config: Pick<WarmupConfig, 'tier_caps'>, tenantId: string, now: Date): Promise<ReconciliationItem[]> {
  const domains = (await tenantWarmups(db, tenantId)).filter((d) => d.verified);
  const caps = new Map((await espCaps(db, tenantId)).map((c) => [c.provider, c.daily_limit]));
  const sent = new Map<string, number>();
  for (const r of await sendsByRecipientDomain(db, tenantId, new Date(now.getTime() - 86_400_000))) {
    const key = `${r.domain_id}|${providerOfDomain(r.recipient_domain)}`;
    sent.set(key, (sent.get(key) ?? 0) + r.sent);
  }
  const over = new Map((await overCapCounts(db, tenantId, utcDay(now))).map((o) => [`${o.domain_id}|${o.provider}`, o]));
  const items: ReconciliationItem[] = [];
  for (const d of domains) {
    const perDomain = capForTier(config, d.tier);
    for (const provider of MAILBOX_PROVIDERS) {
      const key = `${d.domain_id}|${provider}`;
      const perEsp = caps.get(provider) ?? null;
      if (perEsp === null && !sent.has(key) && !over.has(key)) continue;
      items.push({
        domain_id: d.domain_id,
        domain: d.name,
        provider,
        tier: d.tier,
        per_domain_limit: perDomain,
        per_esp_limit: perEsp,
        effective_cap: perEsp === null ? perDomain : Math.min(perDomain, perEsp),
        sent_24h: sent.get(key) ?? 0,
        would_have_throttled_count: over.get(key)?.over_cap ?? 0,
        deferred_count: over.get(key)?.enforced ?? 0,
      });
    }
  }
  return items;
}
