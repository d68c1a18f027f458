// SQL for tenants' Liquid templates. Every query is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';

export interface TemplateRow {
  id: string;
  tenant_id: string;
  name: string;
  subject: string;
  body_html: string | null;
  body_text: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A list entry: the bodies stay in the database (a page of 200 could otherwise weigh hundreds of megabytes). */
export type TemplateSummaryRow = Omit<TemplateRow, 'body_html' | 'body_text'> & { has_body_html: boolean; has_body_text: boolean };

/** The stored content of a template: what create writes and update rewrites. */
export interface TemplateContent {
  name: string;
  subject: string;
  body_html: string | null;
  body_text: string | null;
}

/** Name of the unique index on (tenant_id, lower(name)): a duplicate name violates it. */
export const TEMPLATE_NAME_KEY = 'templates_tenant_name_key';

const columns = (db: Queryable) => db`id, tenant_id, name, subject, body_html, body_text, created_at, updated_at`;
const summaryColumns = (db: Queryable) =>
  db`id, tenant_id, name, subject, body_html is not null as has_body_html, body_text is not null as has_body_text, created_at, updated_at`;

/** LIKE treats % and _ as wildcards; a search for them means the characters themselves. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const nameFilter = (db: Queryable, q: string | undefined) => (q ? db`and name ilike ${likeContains(q)}` : db``);

export async function insertTemplate(db: Queryable, tenantId: string, c: TemplateContent, at: Date): Promise<TemplateRow> {
  const [row] = await db<TemplateRow[]>`
    insert into templates (tenant_id, name, subject, body_html, body_text, created_at, updated_at)
    values (${tenantId}, ${c.name}, ${c.subject}, ${c.body_html}, ${c.body_text}, ${at}, ${at})
    returning ${columns(db)}`;
  return row!;
}

/** One template of a tenant; `lock` holds it until the transaction ends so concurrent updates do not lose fields. */
export async function findTemplate(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<TemplateRow | undefined> {
  const [row] = options.lock
    ? await db<TemplateRow[]>`select ${columns(db)} from templates where tenant_id = ${tenantId} and id = ${id} for update`
    : await db<TemplateRow[]>`select ${columns(db)} from templates where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A page of a tenant's templates, newest first, after a (created_at, id) keyset position; `q` is a name substring. */
export async function listTemplates(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: { at: Date; id: string } | undefined; q?: string | undefined },
): Promise<TemplateSummaryRow[]> {
  const after = page.after;
  return db<TemplateSummaryRow[]>`
    select ${summaryColumns(db)} from templates
    where tenant_id = ${tenantId} ${nameFilter(db, page.q)}
      ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countTemplates(db: Queryable, tenantId: string, q?: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from templates where tenant_id = ${tenantId} ${nameFilter(db, q)}`;
  return row!.n;
}

export async function updateTemplate(db: Queryable, tenantId: string, id: string, c: TemplateContent, at: Date): Promise<TemplateRow | undefined> {
  const [row] = await db<TemplateRow[]>`
    update templates
    set name = ${c.name}, subject = ${c.subject}, body_html = ${c.body_html}, body_text = ${c.body_text}, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

export async function deleteTemplate(db: Queryable, tenantId: string, id: string): Promise<TemplateRow | undefined> {
  const [row] = await db<TemplateRow[]>`delete from templates where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}
