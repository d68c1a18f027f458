// Tenant operations on sending domains: add a claim (with its first DKIM key), read, list, verify now, delete.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { claimExpiry } from './claims.js';
import type { DomainDeps } from './deps.js';
import { claimSelector, generateDkimKey, storeKey } from './dkim-keys.js';
import { parseDomainName } from './names.js';
import {
  activeKeys,
  countDomains,
  deleteDomain,
  findDomain,
  insertDomain,
  insertRecords,
  listDomains,
  listRecords,
  type DkimKeyRow,
  type DomainRow,
  type RecordRow,
} from './queries.js';
import { expectedRecords } from './records.js';
import { inFlightRotationViews, type RotationView } from './rotation-queries.js';
import { verifyDomain } from './verification.js';

export interface DomainDetail {
  domain: DomainRow;
  records: RecordRow[];
  /** The live DKIM signer. */
  key: DkimKeyRow | undefined;
  /** The rotation in flight, if any. */
  rotation: RotationView | undefined;
}

/** Records, live key and in-flight rotation of several domains in three queries. */
async function withDetails(db: Queryable, domains: DomainRow[]): Promise<DomainDetail[]> {
  const ids = domains.map((d) => d.id);
  const [records, keys, rotations] = [await listRecords(db, ids), await activeKeys(db, ids), await inFlightRotationViews(db, ids)];
  return domains.map((domain) => ({
    domain,
    records: records.filter((r) => r.domain_id === domain.id),
    key: keys.find((k) => k.domain_id === domain.id),
    rotation: rotations.find((r) => r.domain_id === domain.id),
  }));
}

/** A tenant's domain or 404 (malformed ids and other tenants' domains alike). */
export async function requireDomain(db: Queryable, tenantId: string, id: string): Promise<DomainRow> {
  const domain = isUuid(id) ? await findDomain(db, tenantId, id) : undefined;
  if (!domain) throw notFound('domain');
  return domain;
}

/**
 * Adds a claim of the name for the tenant. Several tenants may hold claims of one name, and the
 * answer is the same whether or not others do: the one whose own DKIM record shows up in DNS
 * owns the name (claims.ts). The same tenant claiming a name twice is 409 (its own data).
 */
export async function createDomain(deps: DomainDeps, tenantId: string, actor: AuditActor, name: string): Promise<DomainDetail> {
  const parsed = parseDomainName(name, [deps.config.hostname, deps.config.spfInclude]);
  const key = await generateDkimKey(deps.config.dkim.key_bits);
  const at = deps.clock.now();
  const selector = claimSelector(deps.config.dkim.selector_prefix, at);
  let domain: DomainRow;
  try {
    domain = await deps.sql.begin(async (tx) => {
      const row = await insertDomain(tx, { tenantId, name: parsed.ascii, unicodeName: parsed.unicode, at, expiresAt: claimExpiry(deps, at) });
      await storeKey(tx, deps.vault, { tenantId, domainId: row.id, selector, key, state: 'active', at });
      await insertRecords(
        tx,
        row.id,
        expectedRecords(row.name, { selector, publicKey: key.publicKey }, { spfInclude: deps.config.spfInclude, mailHost: deps.config.hostname }),
      );
      await writeAudit(tx, {
        tenantId,
        actor,
        action: 'domain.created',
        resourceType: 'domain',
        resourceId: row.id,
        metadata: { domain: row.name, selector },
        at,
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'domains_tenant_name_key')) throw conflict(`${parsed.ascii} is already a domain of this account`);
    throw err;
  }
  return (await withDetails(deps.sql, [domain]))[0]!;
}

export async function getDomain(deps: DomainDeps, tenantId: string, id: string): Promise<DomainDetail> {
  return (await withDetails(deps.sql, [await requireDomain(deps.sql, tenantId, id)]))[0]!;
}

export async function listDomainPage(
  deps: DomainDeps,
  tenantId: string,
  page: { limit: number; after?: string | undefined },
): Promise<{ items: DomainDetail[]; next_cursor: string | null; total: number }> {
  const after = page.after ? decodeCursor(page.after) : undefined;
  const rows = await listDomains(deps.sql, tenantId, { limit: page.limit + 1, ...(after ? { after } : {}) });
  const { items, next_cursor } = pageOf(rows, page.limit);
  return { items: await withDetails(deps.sql, items), next_cursor, total: await countDomains(deps.sql, tenantId) };
}

export async function verifyDomainNow(deps: DomainDeps, tenantId: string, actor: AuditActor, id: string): Promise<DomainDetail> {
  const domain = await requireDomain(deps.sql, tenantId, id);
  await verifyDomain(deps, domain, actor);
  return getDomain(deps, tenantId, id);
}

/** Deletes the domain with its keys, records and rotations; when it owned the name, another claim may now win it. */
export async function removeDomain(deps: DomainDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('domain');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteDomain(tx, tenantId, id);
    if (!row) throw notFound('domain');
    await writeAudit(tx, { tenantId, actor, action: 'domain.deleted', resourceType: 'domain', resourceId: id, metadata: { domain: row.name }, at });
  });
}
