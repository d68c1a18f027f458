// Mailbox sessions: a bearer JWT from a consumed invite resolved to a Principal limited to its one mailbox.
import type { Principal } from '../../accounts/auth/principal.js';
import type { SessionTokens } from '../../accounts/auth/jwt.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { isUuid } from '../../kernel/ids.js';
import { findMailboxForSession } from './queries.js';

export interface MailboxSessionDeps {
  sql: Queryable;
  tokens: SessionTokens;
  clock: Clock;
}

/**
 * The principal of a valid mailbox session, or undefined. Looked up on every request (one primary-key
 * read, no cache) so a deleted mailbox or a password set anew ends its sessions at once.
 */
export async function resolveMailboxSession(deps: MailboxSessionDeps, token: string): Promise<Principal | undefined> {
  const claims = await deps.tokens.verifyMailbox(token, deps.clock.now());
  if (!claims || !isUuid(claims.mailboxId) || !isUuid(claims.tenantId)) return undefined;
  const mailbox = await findMailboxForSession(deps.sql, claims.mailboxId);
  if (!mailbox || mailbox.tenant.id !== claims.tenantId || !mailbox.password_set_at) return undefined;
  // In milliseconds: a session issued before a new password, even within the same second, has ended;
  // the one issued with the password (the same instant) is valid.
  if (claims.issuedAtMs < mailbox.password_set_at.getTime()) return undefined;
  return {
    kind: 'mailbox',
    tenant: mailbox.tenant,
    user: undefined,
    key: undefined,
    mailbox: { id: mailbox.id, address: mailbox.address },
    scopes: [],
  };
}
