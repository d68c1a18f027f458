// Mints an impersonation token: a super-admin's session scoped to another tenant (claims is_impersonating, impersonator_user_id), short-lived and audited.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { SessionTokens } from '../auth/jwt.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { findTenantById } from '../tenants/queries.js';

export const IMPERSONATION_TTL = { defaultMinutes: 30, minMinutes: 1, maxMinutes: 120 } as const;

export interface ImpersonationToken {
  token: string;
  tenant_id: string;
  is_impersonating: true;
  impersonator_user_id: string;
  ttl_minutes: number;
  expires_at: Date;
}

/**
 * Unknown tenant → 404; the super-admin tenant → 403 (its super-admins sign in as themselves). The start is an
 * audit row of the target tenant (super_admin.impersonation_started); each write made with the token gets its own.
 */
export async function mintImpersonationToken(
  deps: { sql: Sql; tokens: SessionTokens; clock: Clock },
  caller: { userId: string; actor: AuditActor },
  tenantId: string,
  ttlMinutes: number,
): Promise<ImpersonationToken> {
  const tenant = isUuid(tenantId) ? await findTenantById(deps.sql, tenantId) : undefined;
  if (!tenant) throw notFound('tenant');
  if (tenant.is_super_admin) throw new AppError('forbidden', 'cannot impersonate the super-admin tenant');
  const now = deps.clock.now();
  const { token, expiresAt } = await deps.tokens.issue({ userId: caller.userId, tenantId, ttlSeconds: ttlMinutes * 60, now, impersonating: true });
  await writeAudit(deps.sql, {
    tenantId,
    actor: caller.actor,
    action: 'super_admin.impersonation_started',
    resourceType: 'tenant',
    resourceId: tenantId,
    metadata: { impersonator_user_id: caller.userId, ttl_minutes: ttlMinutes, expires_at: new Date(expiresAt * 1000).toISOString() },
    at: now,
  });
  return {
    token,
    tenant_id: tenantId,
    is_impersonating: true,
    impersonator_user_id: caller.userId,
    ttl_minutes: ttlMinutes,
    expires_at: new Date(expiresAt * 1000),
  };
}
