// The super-admin's state changes on tenants: suspend, unsuspend and delete, one at a time or in bulk; each change is audited (bulk rows share one
// bulk_request_id) and announced in the chat.
import { randomUUID } from 'node:crypto';
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { notifyChat, type ChatDeps } from '../../operations/notify/chat.js';
import { enqueueFanout } from '../../campaigns/fanout-jobs.js';
import type { Config } from '../../config/index.js';
import { campaignsWaitingForUnsuspension, deleteTenantCascade, lockTenant, setTenantStatus, type Tenant } from './queries.js';

export interface TenantAdminDeps extends ChatDeps {
  sql: Sql;
  clock: Clock;
  config: ChatDeps['config'] & Pick<Config, 'hostname' | 'campaigns'>;
  /** Drops this process's cached credentials of the tenant, so the change applies at its next request (others within the cache time). */
  forgetTenant?: (tenantId: string) => void;
}

/** Who made the change: the audit actor and a label for the chat text (the super-admin's e-mail). */
export interface TenantAdminCaller {
  actor: AuditActor;
  label: string;
}

export type StatusAction = 'suspend' | 'unsuspend';
export type BulkAction = StatusAction | 'delete';

/** Reasons a bulk row fails with; the super-admin tenant's are also the 403 messages of the single routes. */
export const CANNOT_DELETE_SUPER_ADMIN = 'cannot delete super-admin tenant';
export const CANNOT_SUSPEND_SUPER_ADMIN = 'cannot suspend super-admin tenant';

const TARGET: Record<StatusAction, 'active' | 'suspended'> = { suspend: 'suspended', unsuspend: 'active' };

function describe(t: Pick<Tenant, 'id' | 'name' | 'slug'>): string {
  return `${t.name} (${t.slug}, ${t.id})`;
}

export interface StatusChange {
  tenant_id: string;
  status: 'active' | 'suspended';
  /** False when the tenant already had that status: nothing written, nothing announced. */
  changed: boolean;
}

/**
 * Suspends or unsuspends a tenant. Unknown → 404; suspending the super-admin tenant → 403 (it would lock every operator out).
 * The status, its audit row and the chat notification commit together; a tenant already in that status changes nothing.
 */
export async function changeTenantStatus(
  deps: TenantAdminDeps,
  caller: TenantAdminCaller,
  tenantId: string,
  action: StatusAction,
  options: { reason?: string | undefined; bulkRequestId?: string | undefined } = {},
): Promise<StatusChange> {
  if (!isUuid(tenantId)) throw notFound('tenant');
  const status = TARGET[action];
  const at = deps.clock.now();
  const reason = options.reason?.trim() || null;
  const before = await deps.sql.begin(async (tx) => {
    const row = await setTenantStatus(tx, tenantId, status, { at, reason });
    if (!row) throw notFound('tenant');
    if (row.is_super_admin && action === 'suspend') throw new AppError('forbidden', CANNOT_SUSPEND_SUPER_ADMIN);
    if (row.status === status) return row;
    await writeAudit(tx, {
      tenantId,
      actor: caller.actor,
      action: action === 'suspend' ? 'tenant.suspended' : 'tenant.unsuspended',
      resourceType: 'tenant',
      resourceId: tenantId,
      metadata: {
        previous_status: row.status,
        ...(reason && action === 'suspend' ? { reason } : {}),
        ...(options.bulkRequestId ? { bulk_request_id: options.bulkRequestId } : {}),
      },
      at,
    });
    const text =
      action === 'suspend'
        ? `[${deps.config.hostname}] tenant ${describe(row)} suspended by ${caller.label}${reason ? `: ${reason}` : ''}. Sends and logins are blocked.`
        : `[${deps.config.hostname}] tenant ${describe(row)} unsuspended by ${caller.label}. Sends and logins resume.`;
    await notifyChat(deps, tx, text);
    // Campaigns that waited for the suspension to end go on now rather than at their next recheck.
    if (action === 'unsuspend') {
      for (const campaignId of await campaignsWaitingForUnsuspension(tx, tenantId)) await enqueueFanout(deps, tx, campaignId);
    }
    return row;
  });
  const changed = before.status !== status;
  if (changed) {
    deps.forgetTenant?.(tenantId);
  }
  return { tenant_id: tenantId, status, changed };
}

/**
 * Deletes a tenant with all its data (shared/accounts/tenants/queries.ts: deleteTenantCascade). Unknown → 404;
 * the super-admin tenant → 403. The audit row is written last, so the audit chain's lock is held only briefly.
 */
export async function deleteTenant(
  deps: TenantAdminDeps,
  caller: TenantAdminCaller,
  tenantId: string,
  options: { bulkRequestId?: string | undefined } = {},
): Promise<{ deleted: true; id: string }> {
  if (!isUuid(tenantId)) throw notFound('tenant');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await lockTenant(tx, tenantId);
    if (!row) throw notFound('tenant');
    if (row.is_super_admin) throw new AppError('forbidden', CANNOT_DELETE_SUPER_ADMIN);
    if (!(await deleteTenantCascade(tx, tenantId))) throw notFound('tenant');
    await writeAudit(tx, {
      tenantId,
      actor: caller.actor,
      action: 'tenant.deleted',
      resourceType: 'tenant',
      resourceId: tenantId,
      metadata: { name: row.name, slug: row.slug, plan_id: row.plan_id, ...(options.bulkRequestId ? { bulk_request_id: options.bulkRequestId } : {}) },
      at,
    });
    await notifyChat(deps, tx, `[${deps.config.hostname}] tenant ${describe(row)} deleted with all its data by ${caller.label}.`);
  });
  deps.forgetTenant?.(tenantId);
  return { deleted: true, id: tenantId };
}

export interface BulkRow {
  tenant_id: string;
  /** suspended / active / deleted on success, already_suspended / already_active when nothing changed, error otherwise. */
  status: 'suspended' | 'active' | 'deleted' | 'already_suspended' | 'already_active' | 'error';
  reason?: string;
}

export interface BulkResult {
  bulk_request_id: string;
  action: BulkAction;
  results: BulkRow[];
  succeeded: number;
  failed: number;
}

/**
 * Applies one action to each tenant, each in its own transaction: a row's failure (unknown tenant, the
 * super-admin tenant) is reported in its result and the others go on. Ids repeated in the request are done once.
 */
export async function bulkTenantAction(
  deps: TenantAdminDeps,
  caller: TenantAdminCaller,
  tenantIds: readonly string[],
  action: BulkAction,
  reason?: string,
): Promise<BulkResult> {
  const bulkRequestId = randomUUID();
  const results: BulkRow[] = [];
  for (const tenantId of [...new Set(tenantIds)]) {
    try {
      if (action === 'delete') {
        await deleteTenant(deps, caller, tenantId, { bulkRequestId });
        results.push({ tenant_id: tenantId, status: 'deleted' });
      } else {
        const change = await changeTenantStatus(deps, caller, tenantId, action, { reason, bulkRequestId });
        results.push({ tenant_id: tenantId, status: change.changed ? change.status : change.status === 'suspended' ? 'already_suspended' : 'already_active' });
      }
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      results.push({ tenant_id: tenantId, status: 'error', reason: err.slug === 'not_found' ? 'tenant not found' : err.message });
    }
  }
  const failed = results.filter((r) => r.status === 'error').length;
  return { bulk_request_id: bulkRequestId, action, results, succeeded: results.length - failed, failed };
}

/** Reads with no rule above their SQL, offered here so the API calls the context's surface, not its SQL. */
export { listTenants, TENANT_SORTS } from './queries.js';
