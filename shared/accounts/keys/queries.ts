// SQL for API keys. Every query but the hash look-up is scoped to a tenant.
import type { Queryable } from '../../db/connection.js';
import type { UserRole } from '../auth/users.js';
import type { KeyMode } from './secrets.js';

export interface ApiKeyRow {
  id: string;
  tenant_id: string;
  name: string;
  prefix: string;
  mode: KeyMode;
  scopes: string[];
  created_by_user_id: string | null;
  /** The creator's role when the key was made: the key's ceiling on role-gated routes. */
  role_ceiling: UserRole;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

const columns = (db: Queryable) => db`id, tenant_id, name, prefix, mode, scopes, created_by_user_id, role_ceiling, created_at, last_used_at, revoked_at`;

export async function insertApiKey(
  db: Queryable,
  k: { tenantId: string; name: string; prefix: string; mode: KeyMode; keyHash: string; scopes: string[]; createdBy: string; roleCeiling: UserRole },
): Promise<ApiKeyRow> {
  const [row] = await db<ApiKeyRow[]>`
    insert into api_keys (tenant_id, name, prefix, mode, key_hash, scopes, created_by_user_id, role_ceiling)
    values (${k.tenantId}, ${k.name}, ${k.prefix}, ${k.mode}, ${k.keyHash}, ${k.scopes}, ${k.createdBy}, ${k.roleCeiling})
    returning ${columns(db)}`;
  return row!;
}

/** The key behind a presented secret, revoked or not (the caller decides). */
export async function findApiKeyByHash(db: Queryable, keyHash: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`select ${columns(db)} from api_keys where key_hash = ${keyHash}`;
  return row;
}

export async function listActiveApiKeys(db: Queryable, tenantId: string): Promise<ApiKeyRow[]> {
  return db<ApiKeyRow[]>`
    select ${columns(db)} from api_keys
    where tenant_id = ${tenantId} and revoked_at is null
    order by created_at desc, id`;
}

export async function findActiveApiKey(db: Queryable, tenantId: string, id: string): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`
    select ${columns(db)} from api_keys where tenant_id = ${tenantId} and id = ${id} and revoked_at is null`;
  return row;
}

export async function revokeApiKey(db: Queryable, tenantId: string, id: string, at: Date): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`
    update api_keys set revoked_at = ${at}
    where tenant_id = ${tenantId} and id = ${id} and revoked_at is null
    returning ${columns(db)}`;
  return row;
}

export async function updateApiKeyScopes(db: Queryable, tenantId: string, id: string, scopes: string[]): Promise<ApiKeyRow | undefined> {
  const [row] = await db<ApiKeyRow[]>`
    update api_keys set scopes = ${scopes}
    where tenant_id = ${tenantId} and id = ${id} and revoked_at is null
    returning ${columns(db)}`;
  return row;
}

export async function touchApiKeys(db: Queryable, uses: { id: string; at: Date; ip: string | null }[]): Promise<void> {
  if (uses.length === 0) return;
  const ids = uses.map((u) => u.id);
  const ats = uses.map((u) => u.at.toISOString());
  const ips = uses.map((u) => u.ip ?? '');
  await db`
    update api_keys k set last_used_at = greatest(k.last_used_at, u.at), last_used_ip = nullif(u.ip, '')
    from unnest(${ids}::uuid[], ${ats}::timestamptz[], ${ips}::text[]) as u(id, at, ip)
    where k.id = u.id`;
}
