// SQL for the tenant's default sender (migration 108) and the domain a derived default is at.
import type { Queryable } from '../db/connection.js';

export interface StoredSender {
  from_email: string;
  from_name: string | null;
  reply_to: string | null;
  updated_at: Date;
}

export interface SenderSources {
  tenant_name: string;
  stored: StoredSender | undefined;
  /** The oldest domain that may send (test mode: else the oldest the tenant added); undefined when there is none. */
  domain: string | undefined;
}

/**
 * Everything the default sender is made of, in one round trip: the stored sender and the domain a derived one
 * would be at. The domain is picked deterministically (oldest first, then id) so every batch of a campaign derives
 * the same address. A domain that may send: verified (SPF, DKIM, DMARC) and owned, as in tenantDomainsOf.
 */
export async function senderSources(db: Queryable, tenantId: string, mode: 'live' | 'test'): Promise<SenderSources | undefined> {
  type Row = { tenant_name: string; domain: string | null } & { [K in keyof StoredSender]: StoredSender[K] | null };
  const [row] = await db<Row[]>`
    select t.name as tenant_name, s.from_email, s.from_name, s.reply_to, s.updated_at,
      (select d.name from domains d
        where d.tenant_id = t.id and d.superseded_at is null
          and (${mode === 'test'} or (d.verified_at is not null and d.owned_at is not null))
        order by (d.verified_at is not null and d.owned_at is not null) desc, d.created_at, d.id
        limit 1) as domain
    from tenants t left join tenant_senders s on s.tenant_id = t.id
    where t.id = ${tenantId}`;
  if (!row) return undefined;
  const { from_email, from_name, reply_to, updated_at } = row;
  const stored = from_email === null ? undefined : { from_email, from_name, reply_to, updated_at: updated_at! };
  return { tenant_name: row.tenant_name, stored, domain: row.domain ?? undefined };
}

export async function putStoredSender(db: Queryable, tenantId: string, s: Omit<StoredSender, 'updated_at'>, at: Date): Promise<StoredSender> {
  const [row] = await db<StoredSender[]>`
    insert into tenant_senders (tenant_id, from_email, from_name, reply_to, updated_at)
    values (${tenantId}, ${s.from_email}, ${s.from_name}, ${s.reply_to}, ${at})
    on conflict (tenant_id) do update
      set from_email = excluded.from_email, from_name = excluded.from_name, reply_to = excluded.reply_to, updated_at = excluded.updated_at
    returning from_email, from_name, reply_to, updated_at`;
  return row!;
}

/** Removes the stored sender; true when there was one. */
export async function deleteStoredSender(db: Queryable, tenantId: string): Promise<boolean> {
  const rows = await db`delete from tenant_senders where tenant_id = ${tenantId} returning tenant_id`;
  return rows.length > 0;
}
