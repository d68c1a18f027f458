// Tenant operations on Liquid templates: create and update (parts parsed when saved), list, read, delete, and render for sending.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { parseTemplate, renderContext, type RenderInput } from './liquid.js';
import { outputsOf, type LiquidSource, type TemplateRenderer } from './renderer.js';
import {
  countTemplates,
  deleteTemplate,
  findTemplate,
  insertTemplate,
  listTemplates,
  TEMPLATE_NAME_KEY,
  updateTemplate,
  type TemplateContent,
  type TemplateRow,
  type TemplateSummaryRow,
} from './queries.js';

export interface TemplateDeps {
  sql: Sql;
  clock: Clock;
}

export const MAX_NAME_LENGTH = 200;

/** A PATCH: absent fields keep their value; a null or empty body removes that body. */
export type TemplateChanges = Partial<{ name: string; subject: string; body_html: string | null; body_text: string | null }>;
export type NewTemplate = { name: string; subject: string } & Omit<TemplateChanges, 'name' | 'subject'>;

export interface RenderedTemplate {
  subject: string;
  html: string | null;
  text: string | null;
}

const duplicateName = (name: string) => conflict(`a template named "${name}" already exists (names are compared without case)`);

/** Validates the fields given and parses every Liquid part among them, so nothing unparseable is stored. */
function checkChanges(changes: TemplateChanges): TemplateChanges {
  const out: TemplateChanges = {};
  if (changes.name !== undefined) {
    const name = changes.name.trim();
    if (!name) throw validationError('name', 'must not be blank');
    if (name.length > MAX_NAME_LENGTH) throw validationError('name', `must be at most ${MAX_NAME_LENGTH} characters`);
    out.name = name;
  }
  if (changes.subject !== undefined) {
    if (!changes.subject.trim()) throw validationError('subject', 'must not be blank');
    parseTemplate(changes.subject, 'subject');
    out.subject = changes.subject;
  }
  for (const part of ['body_html', 'body_text'] as const) {
    if (changes[part] === undefined) continue;
    const body = changes[part] || null;
    if (body !== null) parseTemplate(body, part);
    out[part] = body;
  }
  return out;
}

function requireBody(content: TemplateContent): TemplateContent {
  if (content.body_html === null && content.body_text === null) {
    throw validationError('body_html', 'a template needs body_html, body_text or both');
  }
  return content;
}

/** A tenant's template or 404 (malformed ids and other tenants' templates alike). */
export async function requireTemplate(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<TemplateRow> {
  const row = isUuid(id) ? await findTemplate(db, tenantId, id, options) : undefined;
  if (!row) throw notFound('template');
  return row;
}

export async function createTemplate(deps: TemplateDeps, tenantId: string, actor: AuditActor, input: NewTemplate): Promise<TemplateRow> {
  const checked = checkChanges(input);
  const content = requireBody({
    name: checked.name!,
    subject: checked.subject!,
    body_html: checked.body_html ?? null,
    body_text: checked.body_text ?? null,
  });
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const row = await insertTemplate(tx, tenantId, content, at);
      await writeAudit(tx, { tenantId, actor, action: 'template.created', resourceType: 'template', resourceId: row.id, metadata: { name: row.name }, at });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, TEMPLATE_NAME_KEY)) throw duplicateName(content.name);
    throw err;
  }
}

export async function getTemplate(db: Queryable, tenantId: string, id: string): Promise<TemplateRow> {
  return requireTemplate(db, tenantId, id);
}

export async function listTemplatePage(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: string | undefined; q?: string | undefined },
): Promise<{ items: TemplateSummaryRow[]; next_cursor: string | null; total: number }> {
  const after = page.after ? decodeCursor(page.after) : undefined;
  const q = page.q?.trim() || undefined;
  const rows = await listTemplates(db, tenantId, { limit: page.limit + 1, after, q });
  return { ...pageOf(rows, page.limit), total: await countTemplates(db, tenantId, q) };
}

/** Changes the fields given; changed Liquid parts are parsed again before anything is written. */
export async function changeTemplate(deps: TemplateDeps, tenantId: string, actor: AuditActor, id: string, changes: TemplateChanges): Promise<TemplateRow> {
  if (!isUuid(id)) throw notFound('template');
  const checked = checkChanges(changes);
  const fields = Object.keys(checked) as (keyof TemplateChanges)[];
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      // Locked: a concurrent PATCH of another field must not be overwritten with the value read here.
      const current = await requireTemplate(tx, tenantId, id, { lock: true });
      if (fields.length === 0) return current;
      const content = requireBody({
        name: checked.name ?? current.name,
        subject: checked.subject ?? current.subject,
        body_html: checked.body_html !== undefined ? checked.body_html : current.body_html,
        body_text: checked.body_text !== undefined ? checked.body_text : current.body_text,
      });
      const row = (await updateTemplate(tx, tenantId, id, content, at))!;
      await writeAudit(tx, { tenantId, actor, action: 'template.updated', resourceType: 'template', resourceId: id, metadata: { name: row.name, fields }, at });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, TEMPLATE_NAME_KEY)) throw duplicateName(checked.name ?? '');
    throw err;
  }
}

export async function removeTemplate(deps: TemplateDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('template');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteTemplate(tx, tenantId, id);
    if (!row) throw notFound('template');
    await writeAudit(tx, { tenantId, actor, action: 'template.deleted', resourceType: 'template', resourceId: id, metadata: { name: row.name }, at });
  });
}

/** What renders a stored template: the process's renderer, and the render time one request may use. */
export interface RenderDeps {
  renderer: TemplateRenderer;
  budgetMs: number;
}

/**
 * Renders a tenant's stored template for one recipient on the render threads (the render endpoint and transactional
 * sends): 404 for an unknown template, 422 naming the part when a render fails or exceeds a limit or the request's
 * budget, 429 when the tenant already has as many renders waiting as it may.
 */
export async function renderStored(db: Queryable, deps: RenderDeps, tenantId: string, templateId: string, input: RenderInput): Promise<RenderedTemplate> {
  const row = await requireTemplate(db, tenantId, templateId);
  const sources: LiquidSource[] = [{ field: 'subject', part: 'subject', source: row.subject }];
  const at = (part: 'body_html' | 'body_text') => (row[part] === null ? -1 : sources.push({ field: part, part, source: row[part] }) - 1);
  const html = at('body_html');
  const text = at('body_text');
  const item = { context: renderContext(input), sources: sources.map((_, i) => i) };
  const report = await deps.renderer.render({ tenantId, sources, items: [item], budgetMs: deps.budgetMs }, { shed: true });
  const outputs = outputsOf(report.items[0]!);
  return { subject: outputs[0]!, html: html < 0 ? null : outputs[html]!, text: text < 0 ? null : outputs[text]! };
}
