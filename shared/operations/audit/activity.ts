// A tenant's latest audit entries for operators: who did what (the actor resolved to a user's e-mail or an API key's name), newest first.
import type { Queryable } from '../../db/connection.js';

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
