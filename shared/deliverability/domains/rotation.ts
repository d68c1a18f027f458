// DKIM key rotation: start, operator confirm and rollback. Every transition is one transaction with its audit row.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Queryable } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { DomainDeps } from './deps.js';
import { generateDkimKey, nextSelector, storeKey } from './dkim-keys.js';
import { activeKeys, findDomain, findDomainById, findKeys, pointDkimRecord, selectorsOf, setKeyState } from './queries.js';
import { dkimRecord } from './records.js';
import {
  findRotationView,
  listDomainRotations,
  IN_FLIGHT_CONSTRAINT,
  inFlightRotationViews,
  insertRotation,
  lockRotation,
  updateRotation,
  type RotationInitiator,
  type RotationRow,
  type RotationState,
  type RotationView,
} from './rotation-queries.js';
import { requireDomain } from './service.js';
import { verifyDomain } from './verification.js';

/** Where the new key's DNS record stands, as the audit rows and lists report it. */
export function dnsPublishStatus(r: Pick<RotationRow, 'activated_at' | 'dns_published_at' | 'dns_provider_managed'>): string {
  if (r.activated_at) return 'propagated';
  if (r.dns_published_at) return 'confirmed_published';
  return r.dns_provider_managed ? 'provider_managed' : 'awaiting_publication';
}

/** Writes the audit row of one transition (reads the rotation as it now stands in the transaction). */
export async function auditRotation(
  tx: Queryable,
  id: string,
  t: { action: string; from: RotationState | null; actor: AuditActor; at: Date; extra?: Record<string, unknown> },
): Promise<RotationView> {
  const view = (await findRotationView(tx, id))!;
  await writeAudit(tx, {
    tenantId: view.tenant_id,
    actor: t.actor,
    action: t.action,
    resourceType: 'dkim_rotation',
    resourceId: view.id,
    at: t.at,
    metadata: {
      domain_id: view.domain_id,
      domain: view.domain_name,
      from_state: t.from,
      to_state: view.state,
      old_selector: view.old_selector,
      new_selector: view.new_selector,
      reason: view.reason,
      initiated_by: view.initiated_by,
      dns_publish_status: dnsPublishStatus(view),
      dns_published_at: view.dns_published_at?.toISOString() ?? null,
      ...t.extra,
    },
  });
  return view;
}

const inFlightConflict = () => conflict('a DKIM rotation is already in flight for this domain; wait for it to finish or roll it back');

/**
 * Starts a rotation: a new key is generated (pending) and its DNS record rendered for the
 * tenant to publish (publishing). It goes live only when the rotator sees it on every public resolver.
 */
export async function startRotation(
  deps: DomainDeps,
  tenantId: string,
  domainId: string,
  actor: AuditActor,
  options: { reason: string | null; initiatedBy: RotationInitiator },
): Promise<RotationView> {
  const domain = await requireDomain(deps.sql, tenantId, domainId);
  // An unowned claim's key is its proof of control, checked by the domain verification, not by the rotator.
  if (!domain.owned_at) throw conflict('only a domain that owns its name can rotate its DKIM key: publish its DKIM record and verify it first');
  if ((await inFlightRotationViews(deps.sql, [domain.id])).length > 0) throw inFlightConflict();
  const key = await generateDkimKey(deps.config.dkim.key_bits);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      if (!(await findDomain(tx, tenantId, domain.id, { lock: true }))) throw notFound('domain');
      const [current] = await activeKeys(tx, [domain.id]);
      const selector = nextSelector(deps.config.dkim.selector_prefix, at, await selectorsOf(tx, domain.id));
      const newKey = await storeKey(tx, deps.vault, { tenantId, domainId: domain.id, selector, key, state: 'pending', at });
      const rotation = await insertRotation(tx, {
        tenantId,
        domainId: domain.id,
        oldKeyId: current?.id ?? null,
        newKeyId: newKey.id,
        reason: options.reason,
        initiatedBy: options.initiatedBy,
        at,
      });
      await auditRotation(tx, rotation.id, { action: 'dkim.rotation.pending', from: null, actor, at });
      await updateRotation(tx, rotation.id, { state: 'publishing' }, at);
      return auditRotation(tx, rotation.id, { action: 'dkim.rotation.publishing', from: 'pending', actor, at });
    });
  } catch (err) {
    if (isUniqueViolation(err, IN_FLIGHT_CONSTRAINT)) throw inFlightConflict();
    throw err;
  }
}

async function lockForTransition(tx: Queryable, id: string, verb: string): Promise<RotationRow> {
  const row = await lockRotation(tx, id);
  if (!row) throw notFound('DKIM rotation');
  if (row.state === 'retired') throw conflict(`the rotation is retired; there is nothing to ${verb}`);
  return row;
}

/**
 * The operator says the record is published: stamps dns_published_at and clears error. The
 * rotation stays publishing: only the rotator's check on every public resolver activates it.
 */
export async function confirmPublished(deps: DomainDeps, id: string, actor: AuditActor): Promise<RotationView> {
  if (!isUuid(id)) throw notFound('DKIM rotation');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await lockForTransition(tx, id, 'confirm');
    if (row.state !== 'publishing') throw conflict(`only a publishing rotation can be confirmed; this one is ${row.state}`);
    await updateRotation(tx, id, { dns_published_at: at, error: null }, at);
    return auditRotation(tx, id, { action: 'dkim.rotation.confirm_published', from: row.state, actor, at });
  });
}

/**
 * Ends a rotation that is not retired. Before activation the new key is retired unused and the
 * old key never stopped signing. After activation (the old key still published in its grace
 * period) the old key becomes the signer again and the new one is retired; the domain's DKIM
 * record is then re-checked against live DNS.
 */
export async function rollbackRotation(deps: DomainDeps, id: string, actor: AuditActor): Promise<RotationView> {
  if (!isUuid(id)) throw notFound('DKIM rotation');
  const at = deps.clock.now();
  const { view, reverted } = await deps.sql.begin(async (tx) => {
    const row = await lockForTransition(tx, id, 'roll back');
    const reverted = row.activated_at !== null && row.old_key_id !== null;
    if (reverted) {
      const [oldKey] = await findKeys(tx, [row.old_key_id!]);
      if (!oldKey || oldKey.state === 'retired') throw conflict('the old key is already retired and cannot sign again');
      await setKeyState(tx, row.new_key_id, 'retired', at);
      await setKeyState(tx, oldKey.id, 'active', at);
      const domain = (await findDomain(tx, row.tenant_id, row.domain_id))!;
      await pointDkimRecord(tx, row.domain_id, dkimRecord(domain.name, { selector: oldKey.selector, publicKey: oldKey.public_key }));
    } else {
      await setKeyState(tx, row.new_key_id, 'retired', at);
    }
    await updateRotation(tx, id, { state: 'retired', retired_at: at, rolled_back_at: at }, at);
    const view = await auditRotation(tx, id, { action: 'dkim.rotation.rolled_back', from: row.state, actor, at, extra: { reverted_to_old_key: reverted } });
    return { view, reverted };
  });
  if (reverted) {
    const domain = await findDomain(deps.sql, view.tenant_id, view.domain_id);
    if (domain) await verifyDomain(deps, domain, { type: 'system', id: 'dkim-rollback' });
  }
  return view;
}

/** A tenant's rotation of one of its domains, or 404. */
export async function getDomainRotation(deps: DomainDeps, tenantId: string, domainId: string, rotationId: string): Promise<RotationView> {
  const domain = await requireDomain(deps.sql, tenantId, domainId);
  const rotation = isUuid(rotationId) ? await findRotationView(deps.sql, rotationId, tenantId) : undefined;
  if (!rotation || rotation.domain_id !== domain.id) throw notFound('DKIM rotation');
  return rotation;
}

export async function listRotationsOfDomain(deps: DomainDeps, tenantId: string, domainId: string, limit: number): Promise<RotationView[]> {
  const domain = await requireDomain(deps.sql, tenantId, domainId);
  return listDomainRotations(deps.sql, tenantId, domain.id, limit);
}

/** A super-admin starts a rotation on any tenant's domain (e.g. a suspected key compromise). */
export async function startRotationAsAdmin(deps: DomainDeps, domainId: string, actor: AuditActor, reason: string | null): Promise<RotationView> {
  const domain = isUuid(domainId) ? await findDomainById(deps.sql, domainId) : undefined;
  if (!domain) throw notFound('domain');
  return startRotation(deps, domain.tenant_id, domain.id, actor, { reason, initiatedBy: 'admin' });
}

/** Reads with no rule above their SQL, offered here so the API calls the context's surface, not its SQL. */
export { listRotations } from './rotation-queries.js';
