// SQL for a tenant's custom-field catalog (/contact-custom-fields). Every query is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';
import type { FieldType } from './values.js';

export interface CustomFieldRow {
  id: string;
  tenant_id: string;
  key: string;
  label: string;
  type: FieldType;
  options: string[] | null;
  required: boolean;
  position: number;
  created_at: Date;
  updated_at: Date;
}

/** The unique constraint on (tenant_id, key): a duplicate key violates it. */
export const CUSTOM_FIELD_KEY = 'contact_custom_fields_key';

const columns = (db: Queryable) => db`id, tenant_id, key, label, type, options, required, position, created_at, updated_at`;

/** The whole catalog of a tenant, in display order (position, then creation). */
export async function listCustomFields(db: Queryable, tenantId: string): Promise<CustomFieldRow[]> {
  return db<CustomFieldRow[]>`select ${columns(db)} from contact_custom_fields where tenant_id = ${tenantId} order by position, created_at, id`;
}

export async function findCustomField(db: Queryable, tenantId: string, id: string): Promise<CustomFieldRow | undefined> {
  const [row] = await db<CustomFieldRow[]>`select ${columns(db)} from contact_custom_fields where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

export interface NewCustomField {
  key: string;
  label: string;
  type: FieldType;
  options: string[] | null;
  required: boolean;
  position: number;
}

export async function insertCustomField(db: Queryable, tenantId: string, f: NewCustomField, at: Date): Promise<CustomFieldRow> {
  const [row] = await db<CustomFieldRow[]>`
    insert into contact_custom_fields (tenant_id, key, label, type, options, required, position, created_at, updated_at)
    values (${tenantId}, ${f.key}, ${f.label}, ${f.type}, ${f.options}, ${f.required}, ${f.position}, ${at}, ${at})
    returning ${columns(db)}`;
  return row!;
}

export interface CustomFieldChange {
  label?: string;
  options?: string[] | null;
  required?: boolean;
  position?: number;
}

/** Updates the mutable attributes given (key and type never change); undefined when the field is not the tenant's. */
export async function updateCustomField(db: Queryable, tenantId: string, id: string, c: CustomFieldChange, at: Date): Promise<CustomFieldRow | undefined> {
  const [row] = await db<CustomFieldRow[]>`
    update contact_custom_fields set
      label = coalesce(${c.label ?? null}, label),
      options = case when ${c.options !== undefined} then ${c.options ?? null}::text[] else options end,
      required = coalesce(${c.required ?? null}::boolean, required),
      position = coalesce(${c.position ?? null}::integer, position),
      updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

/** Removes the catalog entry only: contacts keep their stored values, which are ignored from now on. */
export async function deleteCustomField(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from contact_custom_fields where tenant_id = ${tenantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/** The next position at the end of the catalog. */
export async function nextPosition(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ next: number }[]>`select coalesce(max(position) + 1, 0)::int as next from contact_custom_fields where tenant_id = ${tenantId}`;
  return row!.next;
}

/**
 * Drops the values a deleted field of this key left in contacts: a new field with a reused key starts
 * empty rather than bringing back values stored under another definition (type, options).
 */
export async function clearStoredValues(db: Queryable, tenantId: string, key: string): Promise<number> {
  const result = await db`
    update contacts set custom_fields = custom_fields - ${key}::text
    where tenant_id = ${tenantId} and custom_fields ? ${key}::text`;
  return result.count;
}
