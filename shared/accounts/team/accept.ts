// Accepting a team invite: creates the user with the invited role and signs them in; the token works once.
import type { SessionTokens } from '../auth/jwt.js';
import { issueSession, type Session } from '../auth/accounts.js';
import { acceptNewPassword, passwordContext } from '../auth/passwords.js';
import { insertUser } from '../auth/users.js';
import { writeAudit } from '../../operations/audit/log.js';
import { accountSuspended, AppError, isUniqueViolation, notFound } from '../../kernel/errors.js';
import { findTenantById } from '../tenants/queries.js';
import { hashInviteToken, type TeamDeps } from './invites.js';
import { claimInvite, findInviteByTokenHash, setInviteUser } from './queries.js';

export interface AcceptDeps extends TeamDeps {
  tokens: SessionTokens;
}

const gone = () => new AppError('gone', 'this invite was already used, was revoked, or has expired; ask for a new invite');

/**
 * Unknown token → 404; used, revoked or expired → 410; suspended tenant → 403; weak password → 422 (the registration rule; nothing consumed);
 * an address that became a user meanwhile → 409. Of several concurrent accepts of one token exactly one wins.
 */
export async function acceptInvite(
  deps: AcceptDeps,
  input: { token: string; password: string; first_name?: string | undefined },
  ip: string | null,
): Promise<Session> {
  const tokenHash = hashInviteToken(input.token);
  const invite = await findInviteByTokenHash(deps.sql, tokenHash);
  if (!invite) throw notFound('invite');
  if (invite.accepted_at || invite.revoked_at || invite.expires_at.getTime() <= deps.clock.now().getTime()) throw gone();
  const tenant = await findTenantById(deps.sql, invite.tenant_id);
  // Its users cannot sign in either; the invite stays unused for when the suspension is lifted.
  if (tenant?.status === 'suspended') throw accountSuspended();
  // Registration's rule: the password must not contain the e-mail's local part or the tenant's slug.
  const passwordHash = await acceptNewPassword(input.password, deps.config.auth, 'password', passwordContext(invite.email, tenant?.slug));
  const at = deps.clock.now();
  try {
    const user = await deps.sql.begin(async (tx) => {
      const claimed = await claimInvite(tx, tokenHash, at);
      if (!claimed) throw gone();
      const created = await insertUser(tx, {
        tenantId: claimed.tenant_id,
        email: claimed.email,
        passwordHash,
        role: claimed.role,
        firstName: input.first_name ?? null,
      });
      await setInviteUser(tx, claimed.id, created.id);
      await writeAudit(tx, {
        tenantId: claimed.tenant_id,
        actor: { type: 'user', id: created.id, ip },
        action: 'team.invite_accepted',
        resourceType: 'team_invite',
        resourceId: claimed.id,
        metadata: { email: claimed.email, role: claimed.role, user_id: created.id },
        at,
      });
      return created;
    });
    return await issueSession(deps, user.id, user.tenant_id);
  } catch (err) {
    // The transaction rolled back: the invite stays unused (the address may be freed and the invite used later).
    if (isUniqueViolation(err, 'users_email_key')) throw new AppError('conflict', 'this e-mail address already belongs to a user');
    throw err;
  }
}
