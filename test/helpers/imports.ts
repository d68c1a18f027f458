// Contact-import test helpers: upload a file through the API, run its job to the end in this process, read the outcome.
import type { FastifyInstance } from 'fastify';
import type { Sql } from '../../shared/db/connection.js';
import { insertCustomField, type NewCustomField } from '../../shared/audiences/custom-fields/queries.js';
import { runImport, type ImportDeps, type RunOutcome } from '../../shared/audiences/imports/run.js';

export interface UploadOptions {
  type?: string;
  query?: Record<string, string>;
}

/** POSTs `file` as the body of /contacts/imports. */
export async function uploadImport(app: FastifyInstance, token: string, file: string | Buffer, options: UploadOptions = {}) {
  const qs = new URLSearchParams(options.query ?? {}).toString();
  const res = await app.inject({
    method: 'POST',
    url: `/api/v1/contacts/imports${qs ? `?${qs}` : ''}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': options.type ?? 'text/csv' },
    payload: file,
  });
  return { status: res.statusCode, body: res.json() as any, headers: res.headers };
}

/** Runs the import's job (and its continuations) here until it ends; at most 100 runs. */
export async function runToEnd(deps: ImportDeps, id: string): Promise<RunOutcome> {
  let outcome: RunOutcome = 'nothing';
  for (let i = 0; i < 100; i++) {
    outcome = await runImport(deps, id);
    if (outcome !== 'continued') return outcome;
  }
  return outcome;
}

/** Uploads, runs and reads the import back (GET /contacts/imports/{id}). */
export async function importFile(app: FastifyInstance, deps: ImportDeps, token: string, file: string | Buffer, options: UploadOptions = {}) {
  const up = await uploadImport(app, token, file, options);
  if (up.status !== 202) throw new Error(`upload refused: ${up.status} ${JSON.stringify(up.body)}`);
  await runToEnd(deps, up.body.data.id);
  const res = await app.inject({ method: 'GET', url: `/api/v1/contacts/imports/${up.body.data.id}`, headers: { authorization: `Bearer ${token}` } });
  return res.json().data as any;
}

export async function addCustomField(
  sql: Sql,
  tenantId: string,
  field: Partial<NewCustomField> & { key: string; type: NewCustomField['type'] },
): Promise<void> {
  await insertCustomField(sql, tenantId, { label: field.key, options: null, required: false, position: 0, ...field }, new Date());
}

export async function addList(sql: Sql, tenantId: string, name: string): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, ${name}, now(), now()) returning id`;
  return row!.id;
}

export async function contactByEmail(sql: Sql, tenantId: string, email: string): Promise<any> {
  const [row] = await sql`select * from contacts where tenant_id = ${tenantId} and email = ${email}`;
  return row;
}
