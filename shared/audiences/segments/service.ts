// Tenant operations on segments: save definitions checked against the catalog and lists, and evaluate them when used (count, preview, the contacts for a send).
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, encodeCursor } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import type { TenantQueries } from '../../db/deadline.js';
import { listCustomFields } from '../custom-fields/queries.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { compileSegment, type CompiledSegment } from './compile.js';
import { parseDefinition, resolveDefinition, type DefinitionEnv, type ParsedDefinition, type SegmentNode, type StoredGroup } from './definition.js';
import {
  countMatching,
  countSegments,
  deleteSegment,
  findSegment,
  insertSegment,
  listSegments,
  pageMatching,
  tenantListIds,
  updateSegment,
  type MatchingContact,
  type SegmentRow,
} from './queries.js';

export interface SegmentDeps {
  sql: Sql;
  clock: Clock;
}

/** Counting a definition: the tenant's heavy-query slots and the segment deadline (past it, 422 naming the rule set). */
export interface SegmentCountDeps extends SegmentDeps {
  queries: TenantQueries;
}

export const MAX_NAME_LENGTH = 200;
export const MAX_PAGE = 10_000;

/** A saved rule that no longer checks against the catalog or the lists; it matches no contact. */
export interface StaleRule {
  path: string;
  problem: string;
}

function checkName(name: string): string {
  const trimmed = name.trim();
  if (!trimmed) throw validationError('name', 'must not be blank');
  if (trimmed.length > MAX_NAME_LENGTH) throw validationError('name', `must be at most ${MAX_NAME_LENGTH} characters`);
  return trimmed;
}

async function environment(db: Queryable, tenantId: string, parsed: ParsedDefinition): Promise<DefinitionEnv> {
  const catalog = await listCustomFields(db, tenantId);
  return { customFields: new Map(catalog.map((f) => [f.key, f.type])), lists: await tenantListIds(db, tenantId, parsed.listIds) };
}

/** Checks a definition from a request against the tenant's catalog and lists: 422 naming the path of the first bad rule. */
export async function checkDefinition(db: Queryable, tenantId: string, raw: unknown): Promise<ParsedDefinition> {
  const parsed = parseDefinition(raw);
  resolveDefinition(parsed, await environment(db, tenantId, parsed), { strict: true });
  return parsed;
}

function staleRules(node: SegmentNode, out: StaleRule[] = []): StaleRule[] {
  if (node.kind === 'stale') out.push({ path: node.path, problem: node.problem });
  if (node.kind === 'group') for (const rule of node.rules) staleRules(rule, out);
  return out;
}

/** The contacts a definition selects at one instant, compiled once: count them or walk them page by page. */
export interface SegmentSelection {
  /** Rules of a saved definition that no longer check (matching nothing); empty for a definition checked strictly. */
  staleRules: StaleRule[];
  count(): Promise<number>;
  /** A page newest first; pass next_cursor back as `after`. */
  page(options: { limit: number; after?: string | null | undefined }): Promise<{ contacts: MatchingContact[]; next_cursor: string | null }>;
  /** Every page in turn, from `after` (a cursor kept from an interrupted walk) or the start. */
  pages(limit: number, after?: string | null): AsyncGenerator<MatchingContact[]>;
}

/**
 * Compiles a definition for the tenant as of `now`. `strict` (a definition from a request) refuses a bad rule
 * with 422; otherwise (a saved definition) a rule whose custom field or list has since gone matches nothing.
 * Deleted contacts are left out unless a rule names `status`; erased contacts (no address) always are.
 */
export async function selectDefinition(db: Queryable, tenantId: string, raw: unknown, options: { now: Date; strict: boolean }): Promise<SegmentSelection> {
  const parsed = parseDefinition(raw);
  const tree = resolveDefinition(parsed, await environment(db, tenantId, parsed), { strict: options.strict });
  const where: CompiledSegment = compileSegment(db, tree, { tenantId, now: options.now, namesStatus: parsed.namesStatus });
  const page: SegmentSelection['page'] = async ({ limit, after }) => {
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) throw new Error(`page limit must be 1..${MAX_PAGE}`);
    const rows = await pageMatching(db, where, { limit: limit + 1, after: after ? decodeCursor(after) : undefined });
    const contacts = rows.slice(0, limit);
    const last = contacts[contacts.length - 1];
    return { contacts, next_cursor: rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null };
  };
  return {
    staleRules: staleRules(tree),
    count: () => countMatching(db, where),
    page,
    async *pages(limit, after = null) {
      let cursor = after;
      do {
        const next = await page({ limit, after: cursor });
        if (next.contacts.length > 0) yield next.contacts;
        cursor = next.next_cursor;
      } while (cursor);
    },
  };
}

/** A tenant's segment or 404 (malformed ids and other tenants' segments alike). */
export async function requireSegment(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<SegmentRow> {
  const row = isUuid(id) ? await findSegment(db, tenantId, id, options) : undefined;
  if (!row) throw notFound('segment');
  return row;
}

/**
 * The contacts a saved segment selects now (the campaign fan-out's entry point): compile once, then count or
 * page through it. 404 for another tenant's segment.
 */
export async function selectSegment(db: Queryable, tenantId: string, segmentId: string, now: Date): Promise<SegmentSelection> {
  const row = await requireSegment(db, tenantId, segmentId);
  return selectDefinition(db, tenantId, row.definition, { now, strict: false });
}

export async function createSegment(deps: SegmentDeps, tenantId: string, actor: AuditActor, input: { name: string; definition: unknown }): Promise<SegmentRow> {
  const name = checkName(input.name);
  const { stored } = await checkDefinition(deps.sql, tenantId, input.definition);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await insertSegment(tx, tenantId, { name, definition: stored }, at);
    await writeAudit(tx, { tenantId, actor, action: 'segment.created', resourceType: 'segment', resourceId: row.id, metadata: { name }, at });
    return row;
  });
}

/** A saved segment and the rules of its definition that no longer check (they match nothing until fixed). */
export interface SegmentView {
  row: SegmentRow;
  staleRules: StaleRule[];
}

/** Saved segments with their stale rules, checked against the catalog and lists read once for all of them. */
async function withStaleRules(db: Queryable, tenantId: string, rows: SegmentRow[]): Promise<SegmentView[]> {
  if (rows.length === 0) return [];
  const parsed = rows.map((row) => parseDefinition(row.definition));
  const catalog = await listCustomFields(db, tenantId);
  const env: DefinitionEnv = {
    customFields: new Map(catalog.map((f) => [f.key, f.type])),
    lists: await tenantListIds(db, tenantId, [...new Set(parsed.flatMap((p) => p.listIds))]),
  };
  return rows.map((row, i) => ({ row, staleRules: staleRules(resolveDefinition(parsed[i]!, env, { strict: false })) }));
}

/** A saved segment with its stale rules (after a create or an update, for the answer). */
export async function viewSegment(db: Queryable, tenantId: string, row: SegmentRow): Promise<SegmentView> {
  const [view] = await withStaleRules(db, tenantId, [row]);
  return view!;
}

export async function getSegment(db: Queryable, tenantId: string, id: string): Promise<SegmentView> {
  return viewSegment(db, tenantId, await requireSegment(db, tenantId, id));
}

export async function listSegmentPage(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: string | undefined },
): Promise<{ items: SegmentView[]; next_cursor: string | null; total: number }> {
  const rows = await listSegments(db, tenantId, { limit: page.limit + 1, after: page.after ? decodeCursor(page.after) : undefined });
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  const next_cursor = rows.length > page.limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null;
  return { items: await withStaleRules(db, tenantId, items), next_cursor, total: await countSegments(db, tenantId) };
}

/** Changes the name, the definition or both; a new definition is checked like a new segment's. */
export async function changeSegment(
  deps: SegmentDeps,
  tenantId: string,
  actor: AuditActor,
  id: string,
  changes: { name?: string | undefined; definition?: unknown },
): Promise<SegmentRow> {
  if (!isUuid(id)) throw notFound('segment');
  const name = changes.name === undefined ? undefined : checkName(changes.name);
  const definition = changes.definition === undefined ? undefined : (await checkDefinition(deps.sql, tenantId, changes.definition)).stored;
  const fields = [...(name !== undefined ? ['name'] : []), ...(definition !== undefined ? ['definition'] : [])];
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const current = await requireSegment(tx, tenantId, id, { lock: true });
    if (fields.length === 0) return current;
    const next: { name: string; definition: StoredGroup } = { name: name ?? current.name, definition: definition ?? current.definition };
    const row = (await updateSegment(tx, tenantId, id, next, at))!;
    await writeAudit(tx, { tenantId, actor, action: 'segment.updated', resourceType: 'segment', resourceId: id, metadata: { name: row.name, fields }, at });
    return row;
  });
}

export async function removeSegment(deps: SegmentDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('segment');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteSegment(tx, tenantId, id);
    if (!row) throw notFound('segment');
    await writeAudit(tx, { tenantId, actor, action: 'segment.deleted', resourceType: 'segment', resourceId: id, metadata: { name: row.name }, at });
  });
}

/** POST /segments/preview: how many contacts a definition selects now, nothing stored. */
export async function previewCount(deps: SegmentCountDeps, tenantId: string, definition: unknown): Promise<number> {
  // Checked first, outside the slots: a bad rule is its own 422 (naming its path) at once.
  await checkDefinition(deps.sql, tenantId, definition);
  const now = deps.clock.now();
  return deps.queries.run(tenantId, 'segment', async (tx) => (await selectDefinition(tx, tenantId, definition, { now, strict: true })).count());
}

/** GET /segments/{id}/count: how many contacts a saved segment selects now, and its stale rules. */
export async function segmentCount(deps: SegmentCountDeps, tenantId: string, id: string): Promise<{ count: number; staleRules: StaleRule[] }> {
  const row = await requireSegment(deps.sql, tenantId, id);
  const now = deps.clock.now();
  return deps.queries.run(tenantId, 'segment', async (tx) => {
    const selection = await selectDefinition(tx, tenantId, row.definition, { now, strict: false });
    return { count: await selection.count(), staleRules: selection.staleRules };
  });
}
