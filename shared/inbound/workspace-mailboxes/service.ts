// Workspace mailboxes for a tenant: who may manage them, create at a verified domain, read, list, delete.
import { randomUUID } from 'node:crypto';
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Principal } from '../../accounts/auth/principal.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { AppError, conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { parseDisplayName, parseMailboxAddress } from './addresses.js';
import { countMailboxes, deleteMailbox, findMailbox, findTenantDomainByName, insertMailbox, listMailboxes, type MailboxRow } from './queries.js';

export interface MailboxDeps {
  sql: Sql;
  clock: Clock;
}

/**
 * Tenant credentials that may manage mailboxes and read their mail: a user session, or an API key
 * without scopes. The spec's scope catalogue has no mail scope, and a key limited to named areas
 * (templates, domains...) was limited on purpose; reading people's mail is none of those areas, so
 * only a key with every scope (the spec's "no scopes = all access") qualifies.
 */
export function requireTenantMailAccess(p: Principal): void {
  if (p.kind === 'api_key' && p.scopes.length > 0) {
    throw new AppError('invalid_scope', 'mailboxes and their mail need a user session or an API key without scopes (all access)');
  }
}

/** A tenant's mailbox or 404 (malformed ids and other tenants' mailboxes alike). */
export async function requireMailbox(db: Queryable, tenantId: string, id: string): Promise<MailboxRow> {
  const row = isUuid(id) ? await findMailbox(db, tenantId, id) : undefined;
  if (!row) throw notFound('mailbox');
  return row;
}

export async function createMailbox(
  deps: MailboxDeps,
  tenantId: string,
  actor: AuditActor,
  input: { address: string; display_name?: string | undefined },
): Promise<MailboxRow> {
  const parsed = parseMailboxAddress(input.address);
  const displayName = parseDisplayName(input.display_name);
  const domain = await findTenantDomainByName(deps.sql, tenantId, parsed.domain);
  if (!domain) throw validationError('address', `${parsed.domain} is not a domain of this account; add it under /domains first`);
  if (!domain.verified_at) throw validationError('address', `${parsed.domain} is not verified yet; verify it under /domains first`);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const row = await insertMailbox(tx, { id: randomUUID(), tenantId, domainId: domain.id, address: parsed.address, displayName, at });
      await writeAudit(tx, {
        tenantId,
        actor,
        action: 'mailbox.created',
        resourceType: 'mailbox',
        resourceId: row.id,
        metadata: { address: row.address, domain_id: domain.id },
        at,
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'mailboxes_address_key')) throw conflict(`${parsed.address} is already a mailbox`);
    throw err;
  }
}

export async function getMailbox(deps: MailboxDeps, tenantId: string, id: string): Promise<MailboxRow> {
  return requireMailbox(deps.sql, tenantId, id);
}

export async function listMailboxPage(
  deps: MailboxDeps,
  tenantId: string,
  query: { limit: number; after?: string | undefined },
): Promise<{ items: MailboxRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  const rows = await listMailboxes(deps.sql, tenantId, { limit: query.limit + 1, after });
  return { ...pageOf(rows, query.limit), total: await countMailboxes(deps.sql, tenantId) };
}

/** Deletes the mailbox with its messages and invites; its sessions stop working at once. */
export async function removeMailbox(deps: MailboxDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('mailbox');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteMailbox(tx, tenantId, id);
    if (!row) throw notFound('mailbox');
    await writeAudit(tx, { tenantId, actor, action: 'mailbox.deleted', resourceType: 'mailbox', resourceId: id, metadata: { address: row.address }, at });
  });
}
