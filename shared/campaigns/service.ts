// Tenant operations on campaigns that are not status changes: create, read with progress, search, PATCH, delete, duplicate, the MD5 list.
import { writeAudit, type AuditActor } from '../operations/audit/log.js';
import type { Clock } from '../kernel/clock.js';
import type { Queryable, Sql } from '../db/connection.js';
import { notFound, validationError } from '../kernel/errors.js';
import { isUuid } from '../kernel/ids.js';
import { likeContains } from '../audiences/contacts/queries.js';
import { checkFields, checkName, checkNewCampaign, MAX_NAME_LENGTH, type CampaignInput } from './fields.js';
import { requireStatus } from './lifecycle-table.js';
import {
  CONTENT_FIELDS,
  countCampaigns,
  deleteCampaign,
  findCampaign,
  insertCampaign,
  listCampaigns,
  tenantOwns,
  updateCampaign,
  type CampaignContent,
  type CampaignRow,
  type CampaignSummaryRow,
} from './queries.js';
import { campaignCounters, type CampaignCounters } from './recipient-queries.js';

export interface CampaignDeps {
  sql: Sql;
  clock: Clock;
}

/** A campaign (or a list entry without its bodies) with its progress counters. */
export interface CampaignView<R extends Pick<CampaignRow, 'id'> = CampaignRow> {
  row: R;
  counters: CampaignCounters;
}

/** A tenant's campaign or 404 (malformed ids and other tenants' campaigns alike). */
export async function requireCampaign(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<CampaignRow> {
  const row = isUuid(id) ? await findCampaign(db, tenantId, id.toLowerCase(), options) : undefined;
  if (!row) throw notFound('campaign');
  return row;
}

/** Campaign rows with their counters, read in one query for all of them. */
export async function viewsOf<R extends Pick<CampaignRow, 'id'>>(db: Queryable, rows: R[]): Promise<CampaignView<R>[]> {
  const counters = await campaignCounters(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({ row, counters: counters.get(row.id)! }));
}

export async function viewOf(db: Queryable, row: CampaignRow): Promise<CampaignView> {
  return (await viewsOf(db, [row]))[0]!;
}

export async function createCampaign(deps: CampaignDeps, tenantId: string, actor: AuditActor, input: CampaignInput): Promise<CampaignView> {
  const content = await checkNewCampaign(deps.sql, tenantId, input);
  const at = deps.clock.now();
  const row = await deps.sql.begin(async (tx) => {
    const created = await insertCampaign(tx, tenantId, content, at);
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'campaign.created',
      resourceType: 'campaign',
      resourceId: created.id,
      metadata: { name: created.name },
      at,
    });
    return created;
  });
  return viewOf(deps.sql, row);
}

export async function getCampaign(db: Queryable, tenantId: string, id: string): Promise<CampaignView> {
  return viewOf(db, await requireCampaign(db, tenantId, id));
}

/** GET /campaigns: q is a case-insensitive substring of the name or subject (blank: all); newest first. */
export async function listCampaignPage(
  db: Queryable,
  tenantId: string,
  page: { q?: string | undefined; limit: number; offset: number },
): Promise<{ items: CampaignView<CampaignSummaryRow>[]; total: number; limit: number; offset: number }> {
  const q = page.q?.trim();
  const like = q ? likeContains(q) : undefined;
  const rows = await listCampaigns(db, tenantId, { like, limit: page.limit, offset: page.offset });
  return { items: await viewsOf(db, rows), total: await countCampaigns(db, tenantId, like), limit: page.limit, offset: page.offset };
}

/** PATCH: only the fields given; content can change while the campaign is a draft or scheduled (409 after). */
export async function changeCampaign(deps: CampaignDeps, tenantId: string, actor: AuditActor, id: string, input: CampaignInput): Promise<CampaignView> {
  const current = await requireCampaign(deps.sql, tenantId, id);
  const changes = await checkFields(deps.sql, tenantId, input);
  const at = deps.clock.now();
  const row = await deps.sql.begin(async (tx) => {
    const locked = await requireCampaign(tx, tenantId, current.id, { lock: true });
    requireStatus(locked, 'edit');
    const fields = Object.keys(changes);
    if (fields.length === 0) return locked;
    const updated = (await updateCampaign(tx, tenantId, locked.id, changes, at))!;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'campaign.updated',
      resourceType: 'campaign',
      resourceId: locked.id,
      metadata: { name: updated.name, fields },
      at,
    });
    return updated;
  });
  return viewOf(deps.sql, row);
}

/** DELETE: only a draft (409 otherwise); its recipients and counters go with it. */
export async function removeCampaign(deps: CampaignDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await requireCampaign(tx, tenantId, id, { lock: true });
    requireStatus(row, 'delete');
    await deleteCampaign(tx, tenantId, row.id);
    await writeAudit(tx, { tenantId, actor, action: 'campaign.deleted', resourceType: 'campaign', resourceId: row.id, metadata: { name: row.name }, at });
  });
}

/** The copy's name: "<name> (copy)", shortened to fit. */
function copyName(name: string): string {
  const suffix = ' (copy)';
  return checkName(`${name.slice(0, MAX_NAME_LENGTH - suffix.length).trim()}${suffix}`);
}

/**
 * POST /duplicate: a new draft with the original's content (subject and subject_b, preheader, bodies, template,
 * target, sender, A/B, UTM and tracking settings, MD5 list); never its schedule, status or progress. Any status.
 */
export async function duplicateCampaign(deps: CampaignDeps, tenantId: string, actor: AuditActor, id: string): Promise<CampaignRow> {
  const original = await requireCampaign(deps.sql, tenantId, id);
  const content = Object.fromEntries(CONTENT_FIELDS.map((f) => [f, original[f]])) as unknown as CampaignContent;
  content.name = copyName(original.name);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const created = await insertCampaign(tx, tenantId, content, at);
    const row = original.md5_list_id ? (await updateCampaign(tx, tenantId, created.id, { md5_list_id: original.md5_list_id }, at))! : created;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'campaign.duplicated',
      resourceType: 'campaign',
      resourceId: row.id,
      metadata: { name: row.name, from: original.id },
      at,
    });
    return row;
  });
}

/** PATCH /md5-list: attaches one of the tenant's MD5 lists (its addresses are skipped at send time) or clears it; draft or scheduled only. */
export async function setMd5List(deps: CampaignDeps, tenantId: string, actor: AuditActor, id: string, listId: string | null): Promise<CampaignView> {
  const current = await requireCampaign(deps.sql, tenantId, id);
  if (listId !== null && (!isUuid(listId) || !(await tenantOwns(deps.sql, tenantId, 'md5_lists', listId.toLowerCase())))) {
    throw validationError('list_id', 'no such MD5 list in this account');
  }
  const md5ListId = listId?.toLowerCase() ?? null;
  const at = deps.clock.now();
  const row = await deps.sql.begin(async (tx) => {
    const locked = await requireCampaign(tx, tenantId, current.id, { lock: true });
    requireStatus(locked, 'edit');
    const updated = (await updateCampaign(tx, tenantId, locked.id, { md5_list_id: md5ListId }, at))!;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'campaign.md5_list_set',
      resourceType: 'campaign',
      resourceId: locked.id,
      metadata: { md5_list_id: md5ListId },
      at,
    });
    return updated;
  });
  return viewOf(deps.sql, row);
}
