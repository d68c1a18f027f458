// A tenant's latest audit entries for operators: who did what (the actor resolved to a user's e-mail or an API key's name), newest first.
import type { Queryable } from '../../db/connection.js';
import { likePrefix } from './queries.js';

export interface ActivityEntry {
  id: string;
  at: Date;
  event: string;
  actor: { type: 'user' | 'api_key' | 'system'; id: string | null; label: string | null; ip: string | null };
  resource_type: string | null;
  resource_id: string | null;
  metadata: Record<string, unknown>;
}

/**
 * The last `limit` audit rows of the tenant, newest first: the tenant's own actions and the operators' actions on it
 * (suspension, plan, sandbox, impersonated writes…). A user or key deleted since keeps its id with a null label.
 */
export async function tenantActivity(db: Queryable, tenantId: string, limit: number): Promise<ActivityEntry[]> {
  const rows = await db<
    {
      id: string;
      created_at: Date;
      action: string;
      actor_type: 'user' | 'api_key' | 'system';
      actor_id: string | null;
      label: string | null;
      ip: string | null;
      resource_type: string | null;
      resource_id: string | null;
      metadata: Record<string, unknown>;
    }[]
  >`
    select a.id::text, a.created_at, a.action, a.actor_type, a.actor_id, a.ip, a.resource_type, a.resource_id, a.metadata,
      -- The cast only for a uuid-shaped id, so each look-up is a primary-key probe and a malformed id is no error.
      case when a.actor_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        case a.actor_type
          when 'user' then (select u.email from users u where u.id = a.actor_id::uuid)
          when 'api_key' then (select k.name from api_keys k where k.id = a.actor_id::uuid)
        end
      end as label
    from audit_events a
    where a.tenant_id = ${tenantId}
    order by a.id desc
    limit ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at,
    event: r.action,
    actor: { type: r.actor_type, id: r.actor_id, label: r.label, ip: r.ip },
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    metadata: r.metadata,
  }));
}

/** What the dashboard's audit page lists by: a window, an action prefix, an actor, a resource; pages go back by id. */
export interface AuditListing {
  tenantId: string;
  since: Date;
  until: Date;
  actionPrefix?: string | undefined;
  /** A user's or key's id, or a user's e-mail (case-insensitive). */
  actor?: string | undefined;
  /** A resource type or a resource id, matched exactly. */
  resource?: string | undefined;
  /** Rows older than this id (the previous page's last). */
  before?: string | undefined;
  limit: number;
}

/**
 * The tenant's audit rows of a listing, newest first, each with its actor's label (a user's e-mail, a key's name).
 * One row more than `limit` is read, so the caller knows whether an older page exists.
 */
export async function listAuditEvents(db: Queryable, l: AuditListing): Promise<(ActivityEntry & { chain_seq: string | null; hash: string | null })[]> {
  const rows = await db<
    {
      id: string;
      created_at: Date;
      action: string;
      actor_type: 'user' | 'api_key' | 'system';
      actor_id: string | null;
      label: string | null;
      ip: string | null;
      resource_type: string | null;
      resource_id: string | null;
      metadata: Record<string, unknown>;
      chain_seq: string | null;
      hash: string | null;
    }[]
  >`
    select a.id::text, a.created_at, a.action, a.actor_type, a.actor_id, a.ip, a.resource_type, a.resource_id, a.metadata,
      a.chain_seq::text, a.hash,
      case when a.actor_id ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' then
        case a.actor_type
          when 'user' then (select u.email from users u where u.id = a.actor_id::uuid)
          when 'api_key' then (select k.name from api_keys k where k.id = a.actor_id::uuid)
        end
      end as label
    from audit_events a
    where a.tenant_id = ${l.tenantId} and a.created_at >= ${l.since} and a.created_at < ${l.until}
      ${l.before !== undefined ? db`and a.id < ${l.before}::bigint` : db``}
      ${l.actionPrefix !== undefined ? db`and a.action like ${likePrefix(l.actionPrefix)}` : db``}
      ${
        l.actor !== undefined
          ? db`and (a.actor_id = ${l.actor} or a.actor_id in (
              select u.id::text from users u where u.tenant_id = ${l.tenantId} and lower(u.email) = lower(${l.actor})))`
          : db``
      }
      ${l.resource !== undefined ? db`and (a.resource_type = ${l.resource} or a.resource_id = ${l.resource})` : db``}
    order by a.id desc
    limit ${l.limit + 1}`;
  return rows.map((r) => ({
    id: r.id,
    at: r.created_at,
    event: r.action,
    actor: { type: r.actor_type, id: r.actor_id, label: r.label, ip: r.ip },
    resource_type: r.resource_type,
    resource_id: r.resource_id,
    metadata: r.metadata,
    chain_seq: r.chain_seq,
    hash: r.hash,
  }));
}

/** Reads with no rule above their SQL, offered here so the API calls the context's surface, not its SQL. */
export { recentCampaignAudit } from './queries.js';
