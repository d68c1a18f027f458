// Super-admin overrides of a domain's warm-up: advance, demote (one tier, or to a given tier), hold (freeze for N days), pause and resume, each recorded as
// a move and audited; a rise or a resume wakes the tenant's campaigns waiting on the cap.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { WarmupConfig } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { conflict, notFound, validationError } from '../../kernel/errors.js';
import type { FanoutQueueDeps } from '../../campaigns/fanout-jobs.js';
import { wakeWarmupWaiters } from '../../campaigns/wake.js';
import { isUuid } from '../../kernel/ids.js';
import { insertMove, lockWarmup, setHeldUntil, setPaused, setTier, type LockedWarmup, type MoveRow } from './ramp-queries.js';
import { warmupsOf } from './queries.js';

export type OverrideAction = 'advance' | 'demote' | 'hold' | 'pause' | 'resume';

export interface OverrideDeps extends FanoutQueueDeps {
  sql: Sql;
  config: FanoutQueueDeps['config'] & { warmup: Pick<WarmupConfig, 'tier_caps' | 'initial_tier'> };
  clock: Clock;
}

export interface OverrideRequest {
  tenantId: string;
  domainId: string;
  action: OverrideAction;
  /** hold: days to freeze the tier; 0 lifts a freeze. */
  days?: number;
  /** advance / demote: the tier to move to (above / below the current one) instead of one step. */
  tier?: number | undefined;
  reason?: string;
  actor: AuditActor;
}

export interface OverrideResult {
  warmup: LockedWarmup;
  move: MoveRow;
  /** Campaigns of the tenant that waited on the warm-up cap and were queued to go on now. */
  woken: string[];
}

const DAY_MS = 86_400_000;

/**
 * Applies one override in a transaction under the domain's row lock: the tier (or pause, or freeze)
 * changes, a move row records it with the operator and reason, and an audit row (warmup.<action>)
 * commits with it. 404 when the domain is not the tenant's; 409 when the move is impossible
 * (advance at the top tier, demote at tier 0, pause a paused domain, resume a running one).
 */
export async function applyOverride(deps: OverrideDeps, r: OverrideRequest): Promise<OverrideResult> {
  if (!isUuid(r.tenantId) || !isUuid(r.domainId)) throw notFound('domain');
  const now = deps.clock.now();
  const [owned] = await deps.sql<{ id: string }[]>`select id from domains where id = ${r.domainId} and tenant_id = ${r.tenantId}`;
  if (!owned) throw notFound('domain');
  await warmupsOf(deps.sql, [{ tenantId: r.tenantId, domainId: r.domainId }], now, deps.config.warmup.initial_tier);
  const top = deps.config.warmup.tier_caps.length - 1;
  // The route's schema checks the range too; this keeps the rule for every caller.
  if (r.tier !== undefined && (!Number.isInteger(r.tier) || r.tier < 0 || r.tier > top)) {
    throw validationError('tier', `must be an integer from 0 to ${top}`);
  }
  return deps.sql.begin(async (tx) => {
    const row = (await lockWarmup(tx, r.domainId))!;
    let toTier = row.tier;
    let action: string = r.action;
    switch (r.action) {
      case 'advance':
        if (row.tier >= top) throw conflict(`the domain is at the top tier (${top})`);
        if (r.tier !== undefined && r.tier <= row.tier) throw conflict(`the domain is at tier ${row.tier}: advance needs a tier above it`);
        toTier = r.tier ?? row.tier + 1;
        await setTier(tx, r.domainId, toTier, now);
        break;
      case 'demote':
        if (row.tier <= 0) throw conflict('the domain is at tier 0');
        if (r.tier !== undefined && r.tier >= row.tier) throw conflict(`the domain is at tier ${row.tier}: demote needs a tier below it`);
        toTier = r.tier ?? row.tier - 1;
        await setTier(tx, r.domainId, toTier, now);
        break;
      case 'hold': {
        const until = r.days ? new Date(now.getTime() + r.days * DAY_MS) : null;
        await setHeldUntil(tx, r.domainId, until);
        // Recorded as 'freeze' so a ramp hold and an operator's freeze read apart in the history.
        action = 'freeze';
        break;
      }
      case 'pause':
        if (row.paused_at) throw conflict('the domain is already paused');
        await setPaused(tx, r.domainId, { at: now, reason: r.reason ?? 'paused by a super-admin' });
        break;
      case 'resume':
        if (!row.paused_at) throw conflict('the domain is not paused');
        await setPaused(tx, r.domainId, null);
        break;
    }
    // A higher cap or an ended pause: campaigns waiting for the next window go on now, not at 00:00 UTC.
    const woken = toTier > row.tier || r.action === 'resume' ? await wakeWarmupWaiters(deps, tx, r.tenantId, now) : [];
    const reason = r.reason ?? (r.action === 'hold' ? (r.days ? `frozen for ${r.days} days` : 'freeze lifted') : `${r.action} by a super-admin`);
    const move = (await insertMove(tx, {
      tenantId: r.tenantId,
      domainId: r.domainId,
      source: 'override',
      ratesDay: null,
      action,
      fromTier: row.tier,
      toTier,
      reason,
      rates: null,
      actorId: r.actor.id,
      at: now,
    }))!;
    await writeAudit(tx, {
      tenantId: r.tenantId,
      actor: r.actor,
      action: `warmup.${r.action}`,
      resourceType: 'domain',
      resourceId: r.domainId,
      metadata: {
        from_tier: row.tier,
        to_tier: toTier,
        reason,
        ...(r.action === 'hold' ? { days: r.days ?? 0 } : {}),
        ...(r.tier !== undefined ? { requested_tier: r.tier } : {}),
        paused_before: row.paused_at !== null,
        ...(woken.length > 0 ? { woken_campaign_ids: woken } : {}),
      },
      at: now,
    });
    return { warmup: (await lockWarmup(tx, r.domainId))!, move, woken };
  });
}
