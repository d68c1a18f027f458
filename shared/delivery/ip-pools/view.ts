// The IP watchdog as operators see it (/admin/ip-watchdog): one row per pool member with its quarantine and latest event, the recent events, and the
// operator's release.
import type { AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { AppError, notFound } from '../../kernel/errors.js';
import { activeQuarantines, latestWatchdogEvents, recentWatchdogEvents, releaseAddress, type QuarantineRow, type WatchdogEventRow } from './queries.js';

export interface ViewDeps {
  sql: Sql;
  config: Pick<Config, 'ipPools'>;
  clock: Clock;
}

export interface PoolMemberView {
  pool: string;
  address: string;
  /** Whether deliveries avoid it now. */
  quarantined: boolean;
  quarantine: Pick<QuarantineRow, 'quarantined_at' | 'quarantined_until' | 'rule'> | null;
  latest_event: WatchdogEventRow | null;
}

/** How many events the view shows. */
export const RECENT_EVENTS = 50;

/** Pool members in config order (pools by name), each with its state at the clock's now. */
export async function watchdogView(deps: ViewDeps): Promise<{ pools: PoolMemberView[]; events: WatchdogEventRow[] }> {
  const now = deps.clock.now();
  const members = Object.keys(deps.config.ipPools.pools)
    .sort()
    .flatMap((pool) => deps.config.ipPools.pools[pool]!.map((address) => ({ pool, address })));
  const addresses = [...new Set(members.map((m) => m.address))];
  const quarantines = new Map((await activeQuarantines(deps.sql, now)).map((q) => [q.address, q]));
  const latest = await latestWatchdogEvents(deps.sql, addresses);
  const events = await recentWatchdogEvents(deps.sql, RECENT_EVENTS);
  return {
    pools: members.map(({ pool, address }) => {
      const q = quarantines.get(address);
      return {
        pool,
        address,
        quarantined: q !== undefined,
        quarantine: q ? { quarantined_at: q.quarantined_at, quarantined_until: q.quarantined_until, rule: q.rule } : null,
        latest_event: latest.get(address) ?? null,
      };
    }),
    events,
  };
}

/**
 * Releases a quarantined pool address now (audited). 404 for an address that is in no pool,
 * 409 when it is not quarantined. Outbound processes see the release within state_cache_ms.
 */
export async function releaseQuarantine(
  deps: ViewDeps,
  rawAddress: string,
  actor: AuditActor,
): Promise<{ address: string; released_at: Date; quarantine: QuarantineRow }> {
  const address = rawAddress.toLowerCase();
  const inPool = Object.values(deps.config.ipPools.pools).some((members) => members.includes(address));
  if (!inPool) throw notFound('pool address');
  const at = deps.clock.now();
  const released = await releaseAddress(deps.sql, address, at, actor);
  if (!released) throw new AppError('conflict', `${address} is not quarantined`);
  return { address, released_at: at, quarantine: released };
}
