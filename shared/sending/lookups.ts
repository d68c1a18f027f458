// Read-only look-ups of the send path (suppression, sending domains, quota usage) batched across concurrent sends: the ones asked in the same tick go to PostgreSQL as one query.
import DataLoader from 'dataloader';
import type { Queryable } from '../db/connection.js';
import { tenantDomainsOf } from '../deliverability/domains/queries.js';
import { monthlyUsages, type Quota } from '../limits/quota/usage.js';
import { suppressedAmong } from '../audiences/suppressions/queries.js';
import { utcMonth } from '../deliverability/warmup/tiers.js';

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
 * Every send asks both questions, each one round trip; under load the same tick holds dozens of
 * them. No caching (cache: false): each answer is read fresh, only the round trips are shared.
 */
export function createSendLookups(db: Queryable): SendLookups {
  const suppressed = new DataLoader<string, boolean>(
    async (keys) => {
      const pairs = keys.map((k) => {
        const [tenantId, email] = k.split(' ') as [string, string];
        return { tenantId, email };
      });
      const found = await suppressedAmong(db, pairs);
      return keys.map((k) => found.has(k));
    },
    { cache: false, maxBatchSize: 500 },
  );
  const domains = new DataLoader<string, TenantDomain[]>(
    async (tenantIds) => {
      const rows = await tenantDomainsOf(db, tenantIds);
      return tenantIds.map((t) => rows.filter((r) => r.tenant_id === t).map((r) => ({ id: r.id, name: r.name, canSend: r.can_send })));
    },
    { cache: false, maxBatchSize: 500 },
  );
  const usage = new DataLoader<string, Quota>(
    async (keys) => {
      // Keys are "<tenant> <month>"; a tick may straddle two months, so each month is one query.
      const byMonth = new Map<string, string[]>();
      for (const k of keys) {
        const [tenantId, month] = k.split(' ') as [string, string];
        byMonth.set(month, [...(byMonth.get(month) ?? []), tenantId]);
      }
      const found = new Map<string, Quota>();
      for (const [month, tenantIds] of byMonth) {
        for (const [tenantId, quota] of await monthlyUsages(db, tenantIds, month)) found.set(`${tenantId} ${month}`, quota);
      }
      return keys.map((k) => found.get(k) ?? { used: 0, cap: 0 });
    },
    { cache: false, maxBatchSize: 500 },
  );
  return {
    // An address never holds a space (normalized), so it can share the key with the tenant id.
    isSuppressed: (tenantId, email) => suppressed.load(`${tenantId} ${email}`),
    sendingDomains: async (tenantId) => (await domains.load(tenantId)).filter((d) => d.canSend).map(({ id, name }) => ({ id, name })),
    tenantDomains: (tenantId) => domains.load(tenantId),
    monthlyUsage: (tenantId, at) => usage.load(`${tenantId} ${utcMonth(at)}`),
  };
}
