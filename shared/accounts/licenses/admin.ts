// The super-admin's license keys: issue one (signed, audited), revoke one or many (audited once per key: revoking again changes nothing and writes nothing).
import { randomUUID } from 'node:crypto';
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { findTenantById } from '../tenants/queries.js';
import { insertLicenseKey, lockLicenseKey, markRevoked, planExists, type LicenseKeyRow } from './queries.js';
import { currentSigningKey, type SigningKeyDeps } from './signing-key.js';
import { signLicense } from './tokens.js';

/** Spec, Limits: bulk sizes, license keys 200 per call. */
export const MAX_BULK_LICENSE_KEYS = 200;

export interface LicenseAdminDeps extends SigningKeyDeps {
  sql: Sql;
  clock: Clock;
  config: Pick<Config, 'publicUrl'>;
}

export interface LicenseAdminCaller {
  actor: AuditActor;
  userId: string | null;
}

export interface CreateLicenseInput {
  plan_id: string;
  tenant_id?: string | null | undefined;
  expires_at?: Date | null | undefined;
}

/**
 * Issues a key for a plan, optionally bound to a tenant and an expiry. Unknown plan or tenant, or an expiry
 * not in the future → 422 naming the field. The row and its audit row commit together.
 */
export async function createLicenseKey(deps: LicenseAdminDeps, caller: LicenseAdminCaller, input: CreateLicenseInput): Promise<LicenseKeyRow> {
  const now = deps.clock.now();
  if (!(await planExists(deps.sql, input.plan_id))) throw validationError('plan_id', `unknown plan '${input.plan_id}'`);
  const tenantId = input.tenant_id ?? null;
  if (tenantId !== null && !(isUuid(tenantId) && (await findTenantById(deps.sql, tenantId)))) throw validationError('tenant_id', 'unknown tenant');
  const expiresAt = input.expires_at ?? null;
  if (expiresAt && expiresAt.getTime() <= now.getTime()) throw validationError('expires_at', 'must be in the future');

  const signing = await currentSigningKey(deps);
  const id = randomUUID();
  // Whole seconds: the token carries seconds, and the row must read back what the token says.
  const issuedAt = new Date(Math.floor(now.getTime() / 1000) * 1000);
  const expires = expiresAt ? new Date(Math.floor(expiresAt.getTime() / 1000) * 1000) : null;
  const key = await signLicense(signing, {
    id,
    plan_id: input.plan_id,
    tenant_id: tenantId,
    issued_at: issuedAt,
    expires_at: expires,
    issuer: deps.config.publicUrl.origin,
  });
  return deps.sql.begin(async (tx) => {
    const row = await insertLicenseKey(tx, {
      id,
      key,
      plan_id: input.plan_id,
      tenant_id: tenantId,
      expires_at: expires,
      signing_kid: signing.kid,
      created_by_user_id: caller.userId,
      created_at: issuedAt,
    });
    await writeAudit(tx, {
      tenantId,
      actor: caller.actor,
      action: 'super_admin.license_key_created',
      resourceType: 'license_key',
      resourceId: id,
      metadata: { plan_id: input.plan_id, tenant_id: tenantId, expires_at: expires?.toISOString() ?? null, kid: signing.kid },
      at: now,
    });
    return row;
  });
}

export type RevokeStatus = 'revoked' | 'already_revoked';

/** A key named by its id or by the key itself. */
function refOf(keyOrId: string): { id: string } | { key: string } {
  return isUuid(keyOrId) ? { id: keyOrId.toLowerCase() } : { key: keyOrId };
}

/**
 * Revokes a key (by id or by the key itself): sets revoked_at and writes one audit row. A key already revoked
 * reports already_revoked and writes nothing; unknown → 404.
 */
export async function revokeLicenseKey(
  deps: LicenseAdminDeps,
  caller: LicenseAdminCaller,
  keyOrId: string,
  options: { bulkRequestId?: string } = {},
): Promise<{ id: string; status: RevokeStatus }> {
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await lockLicenseKey(tx, refOf(keyOrId));
    if (!row) throw notFound('license key');
    if (row.revoked_at) return { id: row.id, status: 'already_revoked' as const };
    await markRevoked(tx, row.id, at);
    await writeAudit(tx, {
      tenantId: row.tenant_id,
      actor: caller.actor,
      action: 'super_admin.license_key_revoked',
      resourceType: 'license_key',
      resourceId: row.id,
      metadata: { plan_id: row.plan_id, ...(options.bulkRequestId ? { bulk_request_id: options.bulkRequestId } : {}) },
      at,
    });
    return { id: row.id, status: 'revoked' as const };
  });
}

export interface BulkRevokeRow {
  /** As given in the request. */
  key: string;
  /** The license key's id; null when not found. */
  id: string | null;
  status: RevokeStatus | 'not_found';
}

export interface BulkRevokeResult {
  bulk_request_id: string;
  results: BulkRevokeRow[];
  revoked: number;
  already_revoked: number;
  not_found: number;
}

/** Revokes each key in its own transaction; repeated entries are done once. Every audit row carries the bulk_request_id. */
export async function bulkRevokeLicenseKeys(deps: LicenseAdminDeps, caller: LicenseAdminCaller, keys: readonly string[]): Promise<BulkRevokeResult> {
  const bulkRequestId = randomUUID();
  const results: BulkRevokeRow[] = [];
  for (const key of [...new Set(keys)]) {
    try {
      const done = await revokeLicenseKey(deps, caller, key, { bulkRequestId });
      results.push({ key, id: done.id, status: done.status });
    } catch (err) {
      if ((err as { slug?: string }).slug !== 'not_found') throw err;
      results.push({ key, id: null, status: 'not_found' });
    }
  }
  const count = (s: BulkRevokeRow['status']) => results.filter((r) => r.status === s).length;
  return { bulk_request_id: bulkRequestId, results, revoked: count('revoked'), already_revoked: count('already_revoked'), not_found: count('not_found') };
}

/** Reads with no rule above their SQL, offered here so the API calls the context's surface, not its SQL. */
export { listLicenseKeys } from './queries.js';
