// Verifies a domain's published records against live DNS and records the outcome: ownership of the name, verified, drift, or a failed look-up.
import type { AuditActor } from '../../operations/audit/log.js';
import { forEachLimit } from '../../kernel/concurrency.js';
import { writeAudit } from '../../operations/audit/log.js';
import { checkDkim, checkDmarc, checkMx, checkSpf, parseTags, type CheckResult } from './checks.js';
import { lockClaimsOf } from './claim-queries.js';
import { auditClaim, decideClaim, expireStaleClaims, type ClaimOutcome } from './claims.js';
import type { DomainDeps } from './deps.js';
import { domainsAfter, listRecords, lockDomainById, saveChecks, updateDomainStatus, type DomainRow, type RecordRow, type StoredCheck } from './queries.js';
import { SENDING_KINDS, type RecordKind } from './records.js';

/** Checks a record against the value the tenant was told to publish (stored with the record). */
function check(deps: DomainDeps, domain: DomainRow, record: RecordRow): Promise<CheckResult> {
  switch (record.kind) {
    case 'spf':
      return checkSpf(deps.dns, domain.name, /include:(\S+)/.exec(record.expected)?.[1] ?? deps.config.spfInclude);
    case 'dkim':
      return checkDkim(deps.dns, record.host, parseTags(record.expected).get('p') ?? '');
    case 'dmarc':
      return checkDmarc(deps.dns, domain.name);
    case 'mx':
      return checkMx(deps.dns, domain.name, record.expected);
  }
}

export interface VerifyOutcome {
  claim: ClaimOutcome;
  /** The domain could send before and after the check. */
  couldSend: boolean;
  canSend: boolean;
  /** Records that verified before and are now shown absent or changed. */
  drifted: RecordKind[];
  lookupFailures: RecordKind[];
}

/**
 * Checks every record of a domain and stores the result. A look-up that failed (timeout,
 * SERVFAIL) proves nothing: it is recorded as the record's error but never verifies a record,
 * nor un-verifies one that was verified. Look-ups run before the transaction, which then
 * applies only results whose expected value did not change meanwhile (a rotation may have).
 * A claim that does not own its name yet wins it when this check finds its own DKIM record and
 * no other claim owns it (claims.ts); only the owner can become verified. A superseded claim is
 * closed: it is not looked up at all (undefined, as for a domain deleted meanwhile).
 */
export async function verifyDomain(deps: DomainDeps, domain: DomainRow, actor: AuditActor): Promise<VerifyOutcome | undefined> {
  if (domain.superseded_at) return undefined;
  const checked = await listRecords(deps.sql, [domain.id]);
  const results = await Promise.all(checked.map(async (r) => ({ record: r, result: await check(deps, domain, r) })));
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    await lockClaimsOf(tx, domain.name);
    const locked = await lockDomainById(tx, domain.id);
    if (!locked || locked.superseded_at) return undefined;
    const current = new Map((await listRecords(tx, [domain.id])).map((r) => [r.kind, r]));
    const drifted: RecordKind[] = [];
    const lookupFailures: RecordKind[] = [];
    const stored: StoredCheck[] = [];
    // The claim's own DKIM key found in DNS by this very check: the proof of control.
    let provenNow = false;
    for (const { record, result } of results) {
      const now = current.get(record.kind);
      if (!now || now.expected !== record.expected || now.host !== record.host) continue;
      if (record.kind === 'dkim' && result.verified) provenNow = true;
      let verified: boolean;
      let verifiedAt: Date | null;
      let driftedAt = now.drifted_at;
      if (result.verified) {
        verified = true;
        verifiedAt = now.verified ? now.verified_at : at;
      } else if (result.lookupFailed) {
        lookupFailures.push(record.kind);
        verified = now.verified;
        verifiedAt = now.verified_at;
      } else {
        verified = false;
        verifiedAt = null;
        if (now.verified) {
          driftedAt = at;
          drifted.push(record.kind);
        }
      }
      // A failed look-up saw nothing: keep showing what the last successful one found.
      stored.push({ kind: record.kind, verified, found: result.lookupFailed ? now.found : result.found, error: result.error, verifiedAt, driftedAt });
      now.verified = verified;
    }
    await saveChecks(tx, domain.id, stored, at);
    const claim = await decideClaim(tx, locked, provenNow, at);
    const owns = claim.outcome === 'owned' || claim.outcome === 'won';
    const canSend = owns && SENDING_KINDS.every((kind) => current.get(kind)?.verified === true);
    const couldSend = locked.verified_at !== null;
    await updateDomainStatus(tx, domain.id, {
      verifiedAt: canSend ? (locked.verified_at ?? at) : null,
      driftedAt: couldSend && !canSend ? at : locked.drifted_at,
      checkedAt: at,
    });
    // Audit rows last: every row lock of this transaction is taken before the audit chain's lock.
    await auditClaim(tx, locked, claim, actor, at);
    const base = { tenantId: domain.tenant_id, actor, resourceType: 'domain', resourceId: domain.id, at };
    if (!couldSend && canSend) await writeAudit(tx, { ...base, action: 'domain.verified', metadata: { domain: domain.name } });
    if (drifted.length > 0) {
      const errors = Object.fromEntries(results.filter((r) => drifted.includes(r.record.kind)).map((r) => [r.record.kind, r.result.error]));
      await writeAudit(tx, { ...base, action: 'domain.drift', metadata: { domain: domain.name, records: drifted, errors, can_send: canSend } });
    }
    return { claim: claim.outcome, couldSend, canSend, drifted, lookupFailures };
  });
}

export interface RecheckSummary {
  /** Unproven claims removed past their expiry. */
  expired: number;
  checked: number;
  verified: number;
  drifted: number;
  lookupFailures: number;
  failed: number;
}

const PAGE = 100;
/** Domains checked at once: the work is waiting on DNS, not CPU. */
const PARALLEL = 8;

/** The scheduled re-check: first removes expired claims, then checks every open claim, in id order, a page at a time. */
export async function recheckAllDomains(deps: DomainDeps): Promise<RecheckSummary> {
  const summary: RecheckSummary = { expired: await expireStaleClaims(deps), checked: 0, verified: 0, drifted: 0, lookupFailures: 0, failed: 0 };
  const actor: AuditActor = { type: 'system', id: 'domain-recheck' };
  let after: string | null = null;
  for (;;) {
    const page: DomainRow[] = await domainsAfter(deps.sql, after, PAGE);
    if (page.length === 0) break;
    await forEachLimit(page, PARALLEL, async (domain) => {
      try {
        const outcome = await verifyDomain(deps, domain, actor);
        if (!outcome) return;
        summary.checked++;
        if (outcome.canSend) summary.verified++;
        if (outcome.drifted.length > 0) summary.drifted++;
        if (outcome.lookupFailures.length > 0) summary.lookupFailures++;
      } catch (err) {
        summary.failed++;
        deps.log.error({ err, domainId: domain.id }, 'domain re-check failed');
      }
    });
    after = page[page.length - 1]!.id;
    if (page.length < PAGE) break;
  }
  return summary;
}
