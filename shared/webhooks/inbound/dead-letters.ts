// The inbound-webhook dead-letter queue of a tenant, for super-admins: list it, and replay one delivery (back to pending, due at once), audited.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.js';
import type { Sql } from '../../db/connection.js';
import { notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { requireTenant } from '../../accounts/tenants/require.js';
import { countDeadDeliveries, listDeadDeliveries, reviveDeadDelivery, type DeadDeliveryRow } from './queries.js';

export interface DeadLetterDeps {
  sql: Sql;
  clock: Clock;
}

/** Most recently dead first; cursor pagination on (dead_at, id). 404 for an unknown tenant. */
export async function listDeadLetters(
  deps: Pick<DeadLetterDeps, 'sql'>,
  tenantId: string,
  query: { limit: number; after?: string | undefined },
): Promise<{ items: DeadDeliveryRow[]; next_cursor: string | null; total: number }> {
  await requireTenant(deps.sql, tenantId);
  const after = query.after ? decodeCursor(query.after) : undefined;
  const rows = await listDeadDeliveries(deps.sql, tenantId, { limit: query.limit + 1, after });
  const items = rows.slice(0, query.limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > query.limit && last ? encodeCursor({ at: last.dead_at, id: last.id }) : null,
    total: await countDeadDeliveries(deps.sql, tenantId),
  };
}

/**
 * Re-queues one dead delivery of the tenant: pending again with its attempts reset (a full new
 * schedule), due at once, and an audit row, all in one transaction. 404 when the tenant is unknown
 * or the delivery is not one of its dead letters.
 */
export async function replayDeadLetter(
  deps: DeadLetterDeps,
  tenantId: string,
  deliveryId: string,
  actor: AuditActor,
): Promise<{ id: string; status: 'pending' }> {
  await requireTenant(deps.sql, tenantId);
  if (!isUuid(deliveryId)) throw notFound('dead-lettered delivery');
  const at = deps.clock.now();
  const revived = await deps.sql.begin(async (tx) => {
    const row = await reviveDeadDelivery(tx, tenantId, deliveryId, at);
    if (!row) return undefined;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'inbound_webhook.delivery_replayed',
      resourceType: 'inbound_webhook_delivery',
      resourceId: row.id,
      at,
    });
    return row;
  });
  if (!revived) throw notFound('dead-lettered delivery');
  return { id: revived.id, status: 'pending' };
}
