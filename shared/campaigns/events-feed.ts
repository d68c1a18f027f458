// A campaign's event feed as tenants read it: its sends' events (accepted, delivered, deferred, bounced, dropped, complaints) and its engagement (opens,
// clicks, unsubscribes), newest first, in cursor pages.
import { decodeCursor, pageOf } from '../kernel/cursor.js';
import type { Queryable } from '../db/connection.js';
import type { EventRow, EventType } from '../engagement/events/queries.js';
import { requireCampaign } from './service.js';
import { campaignEvents } from './stats-queries.js';

export interface CampaignEventQuery {
  limit: number;
  after?: string | undefined;
  type?: EventType | undefined;
  since?: Date | undefined;
  recipient?: string | undefined;
}

/**
 * One page of the tenant's campaign's events (404 for another tenant's). No total: counting a large campaign's
 * events on every page would cost what the kept counters of GET /stats avoid; next_cursor says whether more follow.
 */
export async function campaignEventPage(
  db: Queryable,
  tenantId: string,
  id: string,
  q: CampaignEventQuery,
): Promise<{ items: EventRow[]; next_cursor: string | null }> {
  const row = await requireCampaign(db, tenantId, id);
  const after = q.after ? decodeCursor(q.after) : undefined;
  const rows = await campaignEvents(db, tenantId, row.id, {
    type: q.type,
    since: q.since,
    recipient: q.recipient?.trim().toLowerCase() || undefined,
    limit: q.limit + 1,
    after,
  });
  const page = pageOf(
    rows.map((r) => ({ ...r, created_at: r.occurred_at })),
    q.limit,
  );
  return { items: page.items, next_cursor: page.next_cursor };
}
