// SQL of the audit feeds and exports: a tenant's recent campaign audit, time-ranged rows through a cursor, counted and bounded rows for the PDF.
import type { Queryable } from '../../db/connection.js';
import type { AuditRow } from './log.js';

/** Rows fetched per cursor round trip of the CSV export. */
export const CURSOR_ROWS = 1000;

/** What a PDF export selects: a window and optional action / resource filters, always within one tenant. */
export interface AuditSelection {
  tenantId: string;
  since: Date;
  until: Date;
  action?: string | undefined;
  actionPrefix?: string | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
}

/** The tenant's campaign audit rows (created, updated, sent, A/B finalized, …), newest first. */
export async function recentCampaignAudit(db: Queryable, tenantId: string, limit: number, offset: number): Promise<AuditRow[]> {
  return db<AuditRow[]>`
    select * from audit_events
    where tenant_id = ${tenantId} and action like 'campaign.%'
    order by id desc limit ${limit} offset ${offset}`;
}

/** LIKE pattern matching strings that start with `prefix` literally (% and _ escaped). */
export const likePrefix = (prefix: string) => `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function where(db: Queryable, s: AuditSelection) {
  return db`
    tenant_id = ${s.tenantId} and created_at >= ${s.since} and created_at < ${s.until}
    ${s.action !== undefined ? db`and action = ${s.action}` : db``}
    ${s.actionPrefix !== undefined ? db`and action like ${likePrefix(s.actionPrefix)}` : db``}
    ${s.resourceType !== undefined ? db`and resource_type = ${s.resourceType}` : db``}
    ${s.resourceId !== undefined ? db`and resource_id = ${s.resourceId}` : db``}`;
}

export async function countSelection(db: Queryable, s: AuditSelection): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from audit_events where ${where(db, s)}`;
  return row!.n;
}

/** The selected rows in export order (time, then id), at most `limit`. */
export async function selectRows(db: Queryable, s: AuditSelection, limit: number): Promise<AuditRow[]> {
  return db<AuditRow[]>`select * from audit_events where ${where(db, s)} order by created_at, id limit ${limit}`;
}

/** The selected rows in export order as pages of CURSOR_ROWS (one pooled connection held until the iteration ends). */
export function selectionCursor(db: Queryable, s: AuditSelection): AsyncIterable<AuditRow[]> {
  return db<AuditRow[]>`select * from audit_events where ${where(db, s)} order by created_at, id`.cursor(CURSOR_ROWS);
}
