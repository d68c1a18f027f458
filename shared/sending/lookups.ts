// Read-only look-ups of the send path (suppression, sending domains, quota usage) batched across concurrent sends: the ones asked in the same tick go to
// PostgreSQL as one query.
import type { Queryable } from '../db/connection.js';
import { GroupCommit, READS_IN_FLIGHT } from '../db/group-commit.js';
import type { Logger } from '../kernel/log.js';
import { tenantDomainsOf } from '../deliverability/domains/queries.js';
import { monthlyUsages, type Quota } from '../limits/quota/usage.js';
import { suppressedAmong } from '../audiences/suppressions/queries.js';
import { utcMonth } from '../deliverability/warmup/tiers.js';

const MAX_BATCH = 500;

export interface TenantDomain {
  id: string;
  name: string;
  canSend: boolean;
}

export interface SendLookups {
  /** Whether the (normalized) address is on the tenant's suppression list. */
  isSuppressed(tenantId: string, email: string): Promise<boolean>;
  /** The tenant's domains that may send now (A-label names). */
  sendingDomains(tenantId: string): Promise<{ id: string; name: string }[]>;
  /** Every domain the tenant has added, verified or not, with whether it may send now (test keys may use any of them). */
  tenantDomains(tenantId: string): Promise<TenantDomain[]>;
  /** The tenant's usage and cap for the month of `at` (a read: the quota gate is what counts). */
  monthlyUsage(tenantId: string, at: Date): Promise<Quota>;
}

/**
 * Every send asks both questions, each one round trip; under load the same tick holds dozens of them. Batched by the
 * house's group commit, as the send counters are: one statement at a time per kind, for all who asked meanwhile. No
 * caching: each answer is read fresh, only the round trips are shared.
 */
export function createSendLookups(db: Queryable, log: Logger): SendLookups {
  const suppressed = new GroupCommit<{ tenantId: string; email: string }, boolean>(
    async (pairs) => {
      const found = await suppressedAmong(db, pairs);
      // An address never holds a space (normalized), so it can share the key with the tenant id.
      return pairs.map((p) => found.has(`${p.tenantId} ${p.email}`));
    },
    log,
    'suppression look-ups',
    MAX_BATCH,
    READS_IN_FLIGHT,
  );
  const domains = new GroupCommit<string, TenantDomain[]>(
    async (tenantIds) => {
      const rows = await tenantDomainsOf(db, [...new Set(tenantIds)]);
      return tenantIds.map((t) => rows.filter((r) => r.tenant_id === t).map((r) => ({ id: r.id, name: r.name, canSend: r.can_send })));
    },
    log,
    'domain look-ups',
    MAX_BATCH,
    READS_IN_FLIGHT,
  );
  const usage = new GroupCommit<{ tenantId: string; month: string }, Quota>(
    async (keys) => {
      // A batch may straddle two months, so each month is one query.
      const byMonth = new Map<string, Set<string>>();
      for (const k of keys) byMonth.set(k.month, (byMonth.get(k.month) ?? new Set()).add(k.tenantId));
      const found = new Map<string, Quota>();
      for (const [month, tenantIds] of byMonth) {
        for (const [tenantId, quota] of await monthlyUsages(db, [...tenantIds], month)) found.set(`${tenantId} ${month}`, quota);
      }
      return keys.map((k) => found.get(`${k.tenantId} ${k.month}`) ?? { used: 0, cap: 0 });
    },
    log,
    'quota look-ups',
    MAX_BATCH,
    READS_IN_FLIGHT,
  );
  return {
    isSuppressed: (tenantId, email) => suppressed.write({ tenantId, email }),
    sendingDomains: async (tenantId) => (await domains.write(tenantId)).filter((d) => d.canSend).map(({ id, name }) => ({ id, name })),
    tenantDomains: (tenantId) => domains.write(tenantId),
    monthlyUsage: (tenantId, at) => usage.write({ tenantId, month: utcMonth(at) }),
  };
}
