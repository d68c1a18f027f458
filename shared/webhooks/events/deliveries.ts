// What happened to a tenant's event-webhook deliveries: the delivery log of an endpoint, the dead letters, and replay of one (pending again, audited).
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, encodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Sql } from '../../db/connection.js';
import { notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { DeliveryStatus } from '../outbox.js';
import { countDeliveries, listDeadDeliveries, listDeliveries, reviveDeadDelivery, type DeliveryRow } from './queries.js';
import { requireEndpoint } from './service.js';

export interface DeliveryPage {
  items: DeliveryRow[];
  next_cursor: string | null;
  total: number;
}

/** An endpoint's deliveries, newest first, optionally of one status; 404 for another tenant's endpoint. */
export async function listDeliveryLog(
  deps: { sql: Sql },
  tenantId: string,
  webhookId: string,
  q: { limit: number; after?: string | undefined; status?: DeliveryStatus | undefined },
): Promise<DeliveryPage> {
  await requireEndpoint(deps.sql, tenantId, webhookId);
  const after = q.after ? decodeCursor(q.after) : undefined;
  const filter = { webhookId, ...(q.status ? { status: q.status } : {}) };
  const rows = await listDeliveries(deps.sql, tenantId, { ...filter, limit: q.limit + 1, after });
  return { ...pageOf(rows, q.limit), total: await countDeliveries(deps.sql, tenantId, filter) };
}

/** The tenant's dead letters over all its endpoints, most recently dead first (cursor on dead_at, id). */
export async function listDeadLetters(deps: { sql: Sql }, tenantId: string, q: { limit: number; after?: string | undefined }): Promise<DeliveryPage> {
  const after = q.after ? decodeCursor(q.after) : undefined;
  const rows = await listDeadDeliveries(deps.sql, tenantId, { limit: q.limit + 1, after });
  const items = rows.slice(0, q.limit);
  const last = items[items.length - 1];
  return {
    items,
    next_cursor: rows.length > q.limit && last ? encodeCursor({ at: last.dead_at!, id: last.id }) : null,
    total: await countDeliveries(deps.sql, tenantId, { status: 'dead' }),
  };
}

/**
 * Puts one dead letter back in the outbox: pending, a fresh schedule of attempts, due now; the
 * worker takes it on its next pass. Same delivery id, so the receiver sees the same webhook-id
 * (and can tell a replay from a new event). 404 unless it is a dead delivery of the tenant.
 */
export async function replayDeadLetter(deps: { sql: Sql; clock: Clock }, tenantId: string, actor: AuditActor, id: string): Promise<DeliveryRow> {
  if (!isUuid(id)) throw notFound('dead-lettered delivery');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await reviveDeadDelivery(tx, tenantId, id, at);
    if (!row) throw notFound('dead-lettered delivery');
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'event_webhook.delivery_replayed',
      resourceType: 'event_webhook_delivery',
      resourceId: id,
      metadata: { webhook_id: row.webhook_id, event_id: row.event_id },
      at,
    });
    return row;
  });
}
