// Domain claims: who owns a name several tenants have claimed (the first to show its own DKIM key in DNS), and the expiry of claims that never prove control.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Queryable } from '../../db/connection.js';
import { deleteExpiredClaims, markOwned, ownedByAnother, supersedeOtherClaims, type ClosedClaim } from './claim-queries.js';
import type { DomainDeps } from './deps.js';
import type { DomainRow, RecordRow } from './queries.js';

/*
 * Why the DKIM record is the proof: SPF, DMARC and MX records are the same text for every claimant
 * of a name, so finding them in DNS says nothing about who published them. Each claim has its own
 * DKIM key pair, generated for it, so a TXT record at <selector>._domainkey.<name> holding that
 * claim's public key (p=) can only be there because whoever controls the name's DNS put it there
 * for this claim. Each claim's first key also has its own selector (claimSelector), so the records
 * of two claims never share a host. A separate verification token would prove no more, and the
 * DKIM record has to be published anyway to send.
 */

export type ClaimOutcome =
  /** Owned before this check. */
  | 'owned'
  /** Proved control in this check and now owns the name. */
  | 'won'
  /** Proved control, but another claim owns the name: it stays pending. */
  | 'owned_elsewhere'
  /** Not proved. */
  | 'pending';

export interface ClaimDecision {
  outcome: ClaimOutcome;
  /** Claims of other tenants this win closed (their audit rows are written by `auditClaim`). */
  superseded: ClosedClaim[];
}

/**
 * Decides the claim's ownership after a check; the caller holds the name's claim lock
 * (lockClaimsOf) and the domain row. `provenNow`: this check found the claim's own DKIM record.
 */
export async function decideClaim(tx: Queryable, domain: DomainRow, provenNow: boolean, at: Date): Promise<ClaimDecision> {
  if (domain.owned_at) return { outcome: 'owned', superseded: [] };
  if (!provenNow) return { outcome: 'pending', superseded: [] };
  if (await ownedByAnother(tx, domain.name, domain.id)) return { outcome: 'owned_elsewhere', superseded: [] };
  await markOwned(tx, domain.id, at);
  return { outcome: 'won', superseded: await supersedeOtherClaims(tx, domain.name, domain.id, at) };
}

/**
 * Audit rows of a win: `domain.owned` for the winner, `domain.superseded` in each loser's tenant.
 * Neither names the other side: a claim never learns who else claimed the name.
 */
export async function auditClaim(tx: Queryable, domain: DomainRow, decision: ClaimDecision, actor: AuditActor, at: Date): Promise<void> {
  if (decision.outcome !== 'won') return;
  await writeAudit(tx, {
    tenantId: domain.tenant_id,
    actor,
    action: 'domain.owned',
    resourceType: 'domain',
    resourceId: domain.id,
    metadata: { domain: domain.name },
    at,
  });
  for (const loser of decision.superseded) {
    await writeAudit(tx, {
      tenantId: loser.tenant_id,
      actor: { type: 'system', id: 'domain-claims' },
      action: 'domain.superseded',
      resourceType: 'domain',
      resourceId: loser.id,
      metadata: { domain: loser.name },
      at,
    });
  }
}

/** When a claim made now expires unless it proves control. */
export function claimExpiry(deps: Pick<DomainDeps, 'config'>, at: Date): Date {
  return new Date(at.getTime() + deps.config.dns.claim_expiry_days * 86_400_000);
}

const EXPIRY_PAGE = 500;
/** Pages per sweep: a bounded loop; what is left waits for the next tick. */
const EXPIRY_PAGES = 100;

/** Removes unowned claims (pending or superseded) past their expiry, each with a `domain.expired` audit row in its tenant. */
export async function expireStaleClaims(deps: DomainDeps): Promise<number> {
  const at = deps.clock.now();
  const actor: AuditActor = { type: 'system', id: 'domain-recheck' };
  let expired = 0;
  for (let page = 0; page < EXPIRY_PAGES; page++) {
    const removed = await deps.sql.begin(async (tx) => {
      const rows = await deleteExpiredClaims(tx, at, EXPIRY_PAGE);
      for (const row of rows) {
        await writeAudit(tx, {
          tenantId: row.tenant_id,
          actor,
          action: 'domain.expired',
          resourceType: 'domain',
          resourceId: row.id,
          metadata: { domain: row.name, superseded: row.superseded_at !== null, created_at: row.created_at.toISOString() },
          at,
        });
      }
      return rows.length;
    });
    expired += removed;
    if (removed < EXPIRY_PAGE) break;
  }
  return expired;
}

/** Why a claim is not (or not yet) the name's owner, in words for the tenant; null once it owns the name. */
export function claimReason(domain: DomainRow, records: RecordRow[]): string | null {
  if (domain.owned_at) return null;
  if (domain.superseded_at) {
    return (
      'Another account proved control of this name first by publishing its own DKIM record, so this claim is closed and can no longer verify. ' +
      'Delete it; otherwise it is removed at expires_at.'
    );
  }
  // A claim whose own DKIM record verified without winning found the name owned: shown only to whoever published it (the name's DNS controller).
  if (records.find((r) => r.kind === 'dkim')?.verified) {
    return (
      "This claim's DKIM record is published, but at the last check the name was owned by another account; this claim can own it only once that " +
      'account deletes the domain.'
    );
  }
  return "Pending: publishing this claim's DKIM record proves that this account controls the name. Until then it cannot send, and it is removed at expires_at.";
}
