// The rotator tick (every 30 minutes): activates rotations every public resolver sees, retires old keys past their grace, starts automatic rotations.
import type { AuditActor } from '../../operations/audit/log.js';
import { forEachLimit } from '../../kernel/concurrency.js';
import { AppError } from '../../kernel/errors.js';
import { checkDkim } from './checks.js';
import type { DomainDeps } from './deps.js';
import { findKeys, keysOlderThan, replaceDkimRecord, setKeyState } from './queries.js';
import { dkimHost, dkimRecord } from './records.js';
import { auditRotation, startRotation } from './rotation.js';
import { lockRotation, rotationsInStates, updateRotation, type ResolverResult, type RotationView } from './rotation-queries.js';

const ROTATOR: AuditActor = { type: 'system', id: 'dkim-rotator' };
/** Rotations handled per tick; the rest wait for the next one. */
const BATCH = 500;
const AUTO_BATCH = 50;
/** Rotations checked at once: each waits on three resolvers, then a short transaction. */
const PARALLEL = 8;

export interface RotatorSummary {
  checked: number;
  activated: number;
  waiting: number;
  retired: number;
  autoStarted: number;
  failed: number;
}

/** Asks every public resolver, separately, for the new key's record. */
async function propagation(deps: DomainDeps, rotation: RotationView): Promise<ResolverResult[]> {
  const host = dkimHost(rotation.new_selector, rotation.domain_name);
  return Promise.all(
    deps.publicResolvers.map(async ({ server, dns }) => {
      const result = await checkDkim(dns, host, rotation.new_public_key);
      return { resolver: server, published: result.verified, found: result.found, error: result.error };
    }),
  );
}

function describeWaiting(results: ResolverResult[]): string {
  const missing = results.filter((r) => !r.published);
  const seen = results.length - missing.length;
  return `${seen} of ${results.length} public resolvers return the new record; ${missing.map((r) => `${r.resolver}: ${r.error ?? 'not found'}`).join('; ')}`;
}

/** publishing → active when every resolver returns the new TXT: the new key signs, the old one retires after the grace period. */
async function checkPublishing(deps: DomainDeps, rotation: RotationView): Promise<'activated' | 'waiting'> {
  const results = await propagation(deps, rotation);
  const at = deps.clock.now();
  const everywhere = results.length > 0 && results.every((r) => r.published);
  return deps.sql.begin(async (tx) => {
    const row = await lockRotation(tx, rotation.id);
    // Rolled back or activated by a concurrent run meanwhile: nothing to do.
    if (!row || row.state !== 'publishing') return 'waiting';
    if (!everywhere) {
      await updateRotation(tx, row.id, { error: describeWaiting(results), resolver_results: results, last_checked_at: at }, at);
      return 'waiting';
    }
    if (row.old_key_id) await setKeyState(tx, row.old_key_id, 'retiring', at);
    await setKeyState(tx, row.new_key_id, 'active', at);
    const retireAfter = new Date(at.getTime() + deps.config.dkim.retiring_grace_hours * 3_600_000);
    await updateRotation(
      tx,
      row.id,
      { state: 'active', activated_at: at, retire_after: retireAfter, error: null, resolver_results: results, last_checked_at: at },
      at,
    );
    const record = dkimRecord(rotation.domain_name, { selector: rotation.new_selector, publicKey: rotation.new_public_key });
    await replaceDkimRecord(tx, row.domain_id, record, results[0]!.found ?? record.value, at);
    await auditRotation(tx, row.id, {
      action: 'dkim.rotation.active',
      from: 'publishing',
      actor: ROTATOR,
      at,
      extra: { resolvers: results.map((r) => r.resolver) },
    });
    return 'activated';
  });
}

/** active → retired once the grace period is over: the old key is retired and may leave DNS. */
async function completeIfDue(deps: DomainDeps, rotation: RotationView): Promise<boolean> {
  const at = deps.clock.now();
  if (!rotation.retire_after || rotation.retire_after > at) return false;
  return deps.sql.begin(async (tx) => {
    const row = await lockRotation(tx, rotation.id);
    if (!row || row.state !== 'active' || !row.retire_after || row.retire_after > at) return false;
    if (row.old_key_id) {
      const [oldKey] = await findKeys(tx, [row.old_key_id]);
      if (oldKey && oldKey.state === 'retiring') await setKeyState(tx, oldKey.id, 'retired', at);
    }
    await updateRotation(tx, row.id, { state: 'retired', retired_at: at }, at);
    await auditRotation(tx, row.id, { action: 'dkim.rotation.retired', from: 'active', actor: ROTATOR, at, extra: { completed: true } });
    return true;
  });
}

/** Starts rotations for live keys older than dkim.max_key_age_days (when set). */
async function startAutomaticRotations(deps: DomainDeps): Promise<number> {
  const maxAgeDays = deps.config.dkim.max_key_age_days;
  if (maxAgeDays === null) return 0;
  const cutoff = new Date(deps.clock.now().getTime() - maxAgeDays * 86_400_000);
  let started = 0;
  for (const key of await keysOlderThan(deps.sql, cutoff, AUTO_BATCH)) {
    try {
      await startRotation(deps, key.tenant_id, key.domain_id, ROTATOR, {
        reason: `automatic: key ${key.selector} is older than ${maxAgeDays} days`,
        initiatedBy: 'auto',
      });
      started++;
    } catch (err) {
      // A rotation started by someone else meanwhile is fine; the domain is covered.
      if (!(err instanceof AppError && err.slug === 'conflict')) throw err;
    }
  }
  return started;
}

export async function runRotator(deps: DomainDeps): Promise<RotatorSummary> {
  const summary: RotatorSummary = { checked: 0, activated: 0, waiting: 0, retired: 0, autoStarted: 0, failed: 0 };
  const guard = async (rotation: RotationView, step: () => Promise<void>) => {
    try {
      await step();
    } catch (err) {
      summary.failed++;
      deps.log.error({ err, rotationId: rotation.id }, 'DKIM rotation step failed');
    }
  };
  await forEachLimit(await rotationsInStates(deps.sql, ['publishing'], BATCH), PARALLEL, (rotation) =>
    guard(rotation, async () => {
      summary.checked++;
      summary[(await checkPublishing(deps, rotation)) === 'activated' ? 'activated' : 'waiting']++;
    }),
  );
  for (const rotation of await rotationsInStates(deps.sql, ['active'], BATCH)) {
    await guard(rotation, async () => {
      if (await completeIfDue(deps, rotation)) summary.retired++;
    });
  }
  summary.autoStarted = await startAutomaticRotations(deps);
  return summary;
}
