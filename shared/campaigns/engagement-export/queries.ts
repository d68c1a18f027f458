// SQL of the engagement export: a campaign's events in time order, read through a server-side cursor (a page of rows in memory at a time).
import type { Queryable } from '../../db/connection.js';

export interface ExportEvent {
  occurred_at: Date;
  type: string;
  recipient: string;
  contact_id: string | null;
  user_agent: string | null;
  ip: string | null;
  subtype: string | null;
}

/** Rows fetched per cursor round trip. */
export const CURSOR_ROWS = 1000;

/**
 * The campaign's events of the tenant in [since, until], oldest first, as pages of CURSOR_ROWS rows. The cursor
 * holds one pooled connection until the iteration ends or is abandoned (return() closes it).
 */
export function campaignEventCursor(db: Queryable, tenantId: string, campaignId: string, since: Date, until: Date): AsyncIterable<ExportEvent[]> {
  return db<ExportEvent[]>`
    select occurred_at, type, recipient, contact_id, detail ->> 'user_agent' as user_agent, detail ->> 'ip' as ip, subtype
    from events
    where campaign_id = ${campaignId} and tenant_id = ${tenantId} and occurred_at >= ${since} and occurred_at <= ${until}
    order by occurred_at, id`.cursor(CURSOR_ROWS);
}
