// Who is calling: the principal a credential resolves to, as route handlers see it.
import type { Tenant } from '../tenants/queries.js';
import type { UserRole } from './users.js';
import type { KeyMode } from '../keys/secrets.js';

export interface Principal {
  kind: 'user' | 'api_key';
  tenant: Pick<Tenant, 'id' | 'name' | 'slug' | 'plan_id' | 'is_sandbox' | 'is_super_admin' | 'status'>;
  user: { id: string; email: string; role: UserRole; is_super_admin: boolean; first_name: string | null } | undefined;
  key: { id: string; name: string; prefix: string; mode: KeyMode; scopes: string[] } | undefined;
  /** Scopes of the credential; empty = every scope. */
  scopes: string[];
}

/** The audit actor for a principal. */
export function actorOf(p: Principal, ip: string | null): { type: 'user' | 'api_key'; id: string; ip: string | null } {
  return p.kind === 'user' ? { type: 'user', id: p.user!.id, ip } : { type: 'api_key', id: p.key!.id, ip };
}
