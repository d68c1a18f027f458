// A tenant's warm-up as operators read it: each sending domain's state, the latest tier moves, and the per-provider sub-caps; 404 for an unknown tenant.
import type { Sql } from '../../db/connection.js';
import { requireTenant } from '../../accounts/tenants/require.js';
import { espCaps } from './per-esp-queries.js';
import { listMoves, tenantWarmups, type DomainWarmupView, type MoveRow } from './ramp-queries.js';

/** How many of the latest tier moves the operators' view shows. */
const RECENT_MOVES = 100;

export async function tenantWarmup(deps: { sql: Sql }, tenantId: string): Promise<{ domains: DomainWarmupView[]; moves: MoveRow[] }> {
  await requireTenant(deps.sql, tenantId);
  const [domains, moves] = await Promise.all([tenantWarmups(deps.sql, tenantId), listMoves(deps.sql, tenantId, { limit: RECENT_MOVES })]);
  return { domains, moves };
}

export async function tenantEspCaps(deps: { sql: Sql }, tenantId: string): Promise<Awaited<ReturnType<typeof espCaps>>> {
  await requireTenant(deps.sql, tenantId);
  return espCaps(deps.sql, tenantId);
}
