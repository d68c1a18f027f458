// The daily auto-ramp: judges every verified domain on the previous UTC day's outcomes and moves its tier (or pauses it), once per (tenant, domain, day).
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { decide, ratesOf, type RampAction } from './ramp-rules.js';
import { dayOutcomes, insertMove, lockWarmup, seedEspCaps, setPaused, setTier, verifiedDomains } from './ramp-queries.js';
import { warmupsOf } from './queries.js';
import { utcDay } from './tiers.js';

const DAY_MS = 86_400_000;

export interface RampDeps {
  sql: Sql;
  config: Pick<Config, 'warmup'>;
  clock: Clock;
  log: Logger;
}

export type RampSummary = Record<RampAction, number> & { domains: number; already_done: number; esp_caps_seeded: number };

/**
 * One run of the ramp at the clock's time: the day judged is the UTC day before it. Each domain is
 * decided and recorded in its own transaction under its warm-up row's lock, and the move row's
 * unique (tenant, domain, day) makes any further run for that day (the schedule's retry, run-now,
 * a second process) a no-op for the domain.
 */
export async function runAutoRamp(deps: RampDeps): Promise<RampSummary> {
  const now = deps.clock.now();
  const dayStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - DAY_MS);
  const dayEnd = new Date(dayStart.getTime() + DAY_MS);
  const ratesDay = utcDay(dayStart);
  const config = deps.config.warmup;
  const summary: RampSummary = { domains: 0, promote: 0, hold: 0, demote: 0, pause: 0, reset: 0, already_done: 0, esp_caps_seeded: 0 };

  const domains = await verifiedDomains(deps.sql);
  summary.esp_caps_seeded = await seedEspCaps(deps.sql, [...new Set(domains.map((d) => d.tenant_id))], config.per_esp_caps);
  // Create the rows of domains that never sent (they start at the initial tier) before locking them one by one.
  await warmupsOf(
    deps.sql,
    domains.map((d) => ({ tenantId: d.tenant_id, domainId: d.domain_id })),
    now,
    config.initial_tier,
  );

  for (const d of domains) {
    summary.domains++;
    const counts = await dayOutcomes(deps.sql, { tenantId: d.tenant_id, domainId: d.domain_id, from: dayStart, to: dayEnd });
    const rates = ratesOf(counts);
    const action = await deps.sql.begin(async (tx) => {
      const row = await lockWarmup(tx, d.domain_id);
      if (!row) return undefined;
      const lastActive = row.last_send_at ?? row.tier_changed_at;
      const verdict = decide(
        config,
        {
          tier: row.tier,
          paused: row.paused_at !== null,
          held: row.held_until !== null && row.held_until > now,
          idleDays: (now.getTime() - lastActive.getTime()) / DAY_MS,
        },
        rates,
      );
      const move = await insertMove(tx, {
        tenantId: d.tenant_id,
        domainId: d.domain_id,
        source: 'auto',
        ratesDay,
        action: verdict.action,
        fromTier: row.tier,
        toTier: verdict.toTier,
        reason: verdict.reason,
        rates: { ...rates, class: verdict.class },
        actorId: null,
        at: now,
      });
      if (!move) return 'already_done' as const;
      if (verdict.toTier !== row.tier) await setTier(tx, d.domain_id, verdict.toTier, now);
      if (verdict.action === 'pause')
        await setPaused(tx, d.domain_id, { at: now, reason: `auto-ramp: bounce rate ${(rates.bounce_rate * 100).toFixed(2)}% on ${ratesDay}` });
      return verdict.action;
    });
    if (action === undefined) continue;
    summary[action]++;
    if (action !== 'already_done' && action !== 'hold') {
      deps.log.info({ domain: d.name, tenant_id: d.tenant_id, action, day: ratesDay, rates }, 'warm-up auto-ramp moved a domain');
    }
  }
  return summary;
}
