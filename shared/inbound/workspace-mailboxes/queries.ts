// SQL for workspace mailboxes and their invites. Every query a tenant can reach is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';
import type { Principal } from '../../accounts/auth/principal.js';

export interface MailboxRow {
  id: string;
  tenant_id: string;
  domain_id: string;
  address: string;
  display_name: string | null;
  /** Whether an invite was consumed: the mailbox can be signed in to. */
  password_set: boolean;
  created_at: Date;
  updated_at: Date;
}

export interface InviteRow {
  id: string;
  tenant_id: string;
  mailbox_id: string;
  expires_at: Date;
  used_at: Date | null;
}

const columns = (db: Queryable) => db`id, tenant_id, domain_id, address, display_name, password_hash is not null as password_set, created_at, updated_at`;

/** The tenant's domain of this (ASCII, lower-case) name: a mailbox address must be at one. */
export async function findTenantDomainByName(
  db: Queryable,
  tenantId: string,
  name: string,
): Promise<{ id: string; name: string; verified_at: Date | null } | undefined> {
  const [row] = await db<{ id: string; name: string; verified_at: Date | null }[]>`
    select id, name, verified_at from domains where tenant_id = ${tenantId} and name = ${name}`;
  return row;
}

/** Inserts a mailbox; an address taken anywhere on the platform is a unique violation (mailboxes_address_key). */
export async function insertMailbox(
  db: Queryable,
  m: { id: string; tenantId: string; domainId: string; address: string; displayName: string | null; at: Date },
): Promise<MailboxRow> {
  const [row] = await db<MailboxRow[]>`
    insert into mailboxes (id, tenant_id, domain_id, address, display_name, created_at, updated_at)
    values (${m.id}, ${m.tenantId}, ${m.domainId}, ${m.address}, ${m.displayName}, ${m.at}, ${m.at})
    returning ${columns(db)}`;
  return row!;
}

export async function findMailbox(db: Queryable, tenantId: string, id: string): Promise<MailboxRow | undefined> {
  const [row] = await db<MailboxRow[]>`select ${columns(db)} from mailboxes where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A page of a tenant's mailboxes, newest first, after a (created_at, id) keyset position. */
export async function listMailboxes(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<MailboxRow[]> {
  const after = page.after;
  return db<MailboxRow[]>`
    select ${columns(db)} from mailboxes
    where tenant_id = ${tenantId}
      ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countMailboxes(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from mailboxes where tenant_id = ${tenantId}`;
  return row!.n;
}

/** Deletes a mailbox; its messages and invites go with it (foreign keys cascade). */
export async function deleteMailbox(db: Queryable, tenantId: string, id: string): Promise<MailboxRow | undefined> {
  const [row] = await db<MailboxRow[]>`delete from mailboxes where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}

export type SessionTenant = Principal['tenant'];

/** What a mailbox session needs on every request: the mailbox, when its password was set, and its tenant. */
export async function findMailboxForSession(
  db: Queryable,
  id: string,
): Promise<{ id: string; address: string; password_set_at: Date | null; tenant: SessionTenant } | undefined> {
  const [row] = await db<(SessionTenant & { mailbox_id: string; address: string; password_set: boolean; updated_at: Date })[]>`
    select m.id as mailbox_id, m.address, m.password_hash is not null as password_set, m.updated_at,
           t.id, t.name, t.slug, t.plan_id, t.is_sandbox, t.is_super_admin, t.status
    from mailboxes m join tenants t on t.id = m.tenant_id
    where m.id = ${id}`;
  if (!row) return undefined;
  return {
    id: row.mailbox_id,
    address: row.address,
    // updated_at only moves when a password is set (mailboxes are not edited otherwise).
    password_set_at: row.password_set ? row.updated_at : null,
    tenant: {
      id: row.id,
      name: row.name,
      slug: row.slug,
      plan_id: row.plan_id,
      is_sandbox: row.is_sandbox,
      is_super_admin: row.is_super_admin,
      status: row.status,
    },
  };
}

export async function setMailboxPassword(db: Queryable, id: string, passwordHash: string, at: Date): Promise<MailboxRow | undefined> {
  const [row] = await db<MailboxRow[]>`
    update mailboxes set password_hash = ${passwordHash}, updated_at = ${at} where id = ${id} returning ${columns(db)}`;
  return row;
}

/** Ends the mailbox's unused invites now, so only the newest one can be consumed. */
export async function expireOpenInvites(db: Queryable, mailboxId: string, at: Date): Promise<number> {
  const rows = await db`
    update mailbox_invites set expires_at = ${at}
    where mailbox_id = ${mailboxId} and used_at is null and expires_at > ${at}
    returning id`;
  return rows.length;
}

export async function insertInvite(
  db: Queryable,
  i: { id: string; tenantId: string; mailboxId: string; tokenHash: string; expiresAt: Date; createdBy: string | null; at: Date },
): Promise<void> {
  await db`
    insert into mailbox_invites (id, tenant_id, mailbox_id, token_hash, expires_at, created_by, created_at)
    values (${i.id}, ${i.tenantId}, ${i.mailboxId}, ${i.tokenHash}, ${i.expiresAt}, ${i.createdBy}, ${i.at})`;
}

export async function findInviteByHash(db: Queryable, tokenHash: string): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`
    select id, tenant_id, mailbox_id, expires_at, used_at from mailbox_invites where token_hash = ${tokenHash}`;
  return row;
}

/**
 * Marks the invite used if it still is unused and unexpired. One statement, so of two concurrent
 * consumers exactly one gets the row back: the other waits on the row lock and then finds used_at set.
 */
export async function claimInvite(db: Queryable, tokenHash: string, at: Date): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`
    update mailbox_invites set used_at = ${at}
    where token_hash = ${tokenHash} and used_at is null and expires_at > ${at}
    returning id, tenant_id, mailbox_id, expires_at, used_at`;
  return row;
}
