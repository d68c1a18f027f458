// API key life cycle for a tenant: create (shown once), list, revoke, change scopes; each change audited.
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { UserRole } from '../auth/users.js';
import { isScope, SCOPES } from './scopes.js';
import { generateApiKey, hashApiKey, type KeyMode } from './secrets.js';
import { findActiveApiKey, findApiKeyByHash, insertApiKey, listActiveApiKeys, revokeApiKey, updateApiKeyScopes, type ApiKeyRow } from './queries.js';

interface Deps {
  sql: Sql;
  config: Config;
  clock: Clock;
}

/** Rejects unknown scopes (400, as the spec's scope update row says) and removes duplicates. */
export function normalizeScopes(scopes: string[] | undefined): string[] {
  const list = scopes ?? [];
  const unknown = list.filter((s) => !isScope(s));
  if (unknown.length > 0) throw new AppError('bad_request', `unknown scope(s): ${unknown.join(', ')}; the scopes are ${SCOPES.join(', ')}`);
  return [...new Set(list)].sort();
}

/** Who makes a key: a signed-in user, whose role becomes the key's ceiling. */
export interface KeyCreator {
  audit: AuditActor;
  userId: string;
  role: UserRole;
}

export async function createApiKey(
  deps: Deps,
  tenantId: string,
  creator: KeyCreator,
  input: { name: string; scopes?: string[] | undefined; mode?: KeyMode | undefined },
): Promise<{ row: ApiKeyRow; key: string }> {
  const scopes = normalizeScopes(input.scopes);
  const mode = input.mode ?? 'live';
  const { key, prefix } = generateApiKey(mode === 'live' ? deps.config.keyPrefixes.live : deps.config.keyPrefixes.test);
  const row = await deps.sql.begin(async (tx) => {
    const created = await insertApiKey(tx, {
      tenantId,
      name: input.name,
      prefix,
      mode,
      keyHash: hashApiKey(key),
      scopes,
      createdBy: creator.userId,
      roleCeiling: creator.role,
    });
    await writeAudit(tx, {
      tenantId,
      actor: creator.audit,
      action: 'api_key.created',
      resourceType: 'api_key',
      resourceId: created.id,
      metadata: { name: created.name, prefix, mode, scopes, role_ceiling: creator.role },
      at: deps.clock.now(),
    });
    return created;
  });
  return { row, key };
}

/** The id of the key a secret hashes to (revoked keys too: a refused call is still that key's), or null: no such key. */
export async function keyIdOfHash(deps: Pick<Deps, 'sql'>, hash: string): Promise<string | null> {
  return (await findApiKeyByHash(deps.sql, hash))?.id ?? null;
}

export function listApiKeys(deps: Deps, tenantId: string): Promise<ApiKeyRow[]> {
  return listActiveApiKeys(deps.sql, tenantId);
}

export async function revokeKey(deps: Deps, tenantId: string, actor: AuditActor, keyId: string): Promise<ApiKeyRow> {
  if (!isUuid(keyId)) throw notFound('API key');
  const row = await deps.sql.begin(async (tx) => {
    const revoked = await revokeApiKey(tx, tenantId, keyId, deps.clock.now());
    if (!revoked) return undefined;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'api_key.revoked',
      resourceType: 'api_key',
      resourceId: revoked.id,
      metadata: { name: revoked.name, prefix: revoked.prefix },
      at: deps.clock.now(),
    });
    return revoked;
  });
  if (!row) throw notFound('API key');
  return row;
}

export async function changeScopes(deps: Deps, tenantId: string, actor: AuditActor, keyId: string, scopes: string[]): Promise<ApiKeyRow> {
  const normalized = normalizeScopes(scopes);
  if (!isUuid(keyId)) throw notFound('API key');
  const row = await deps.sql.begin(async (tx) => {
    const before = await findActiveApiKey(tx, tenantId, keyId);
    if (!before) return undefined;
    const updated = await updateApiKeyScopes(tx, tenantId, keyId, normalized);
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'api_key.scopes_changed',
      resourceType: 'api_key',
      resourceId: keyId,
      metadata: { before: before.scopes, after: normalized },
      at: deps.clock.now(),
    });
    return updated;
  });
  if (!row) throw notFound('API key');
  return row;
}
