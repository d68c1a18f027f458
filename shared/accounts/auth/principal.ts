// Who is calling: the principal a credential resolves to, as route handlers see it.
import type { Tenant } from '../tenants/queries.js';
import type { UserRole } from './users.js';
import type { KeyMode } from '../keys/secrets.js';

export interface Principal {
  /** mailbox: a session from a consumed mailbox invite; only routes that opt in (auth any_or_mailbox) accept it. */
  kind: 'user' | 'api_key' | 'mailbox';
  tenant: Pick<Tenant, 'id' | 'name' | 'slug' | 'plan_id' | 'is_sandbox' | 'is_super_admin' | 'status'>;
  user: { id: string; email: string; role: UserRole; is_super_admin: boolean; first_name: string | null } | undefined;
  /** role: the role of the user who made the key, as it was then: the key's ceiling on role-gated routes. */
  key: { id: string; name: string; prefix: string; mode: KeyMode; scopes: string[]; role: UserRole } | undefined;
  /** Set for kind mailbox only: the one mailbox the session may read. */
  mailbox?: { id: string; address: string } | undefined;
  /** Set for an impersonation token: a super-admin acting in this tenant (as its owner, without super-admin rights). */
  impersonation?: { impersonatorUserId: string } | undefined;
  /** Scopes of the credential; empty = every scope. */
  scopes: string[];
}

/** The audit actor for a principal. */
export function actorOf(p: Principal, ip: string | null): { type: 'user' | 'api_key'; id: string; ip: string | null } {
  // No route that audits accepts a mailbox session; failing loudly beats recording the wrong actor.
  if (p.kind === 'mailbox') throw new Error('a mailbox session is not an audit actor');
  return p.kind === 'user' ? { type: 'user', id: p.user!.id, ip } : { type: 'api_key', id: p.key!.id, ip };
}
