// Team members: list, change a role, remove; the owner/admin rules and the last-owner guard, each change audited.
import { writeAudit } from '../../operations/audit/log.js';
import type { UserRole } from '../auth/users.js';
import { AppError, conflict, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { TeamActor, TeamDeps } from './invites.js';
import { canManageRole } from './roles.js';
import { countOwners, deleteMember, findMember, listMembers, lockTeam, setMemberRole, type MemberRow } from './queries.js';

export function listTeam(deps: TeamDeps, tenantId: string): Promise<MemberRow[]> {
  return listMembers(deps.sql, tenantId);
}

const lastOwner = (what: string) => conflict(`${what} the tenant's last owner: make another member owner first`);

/** The member of this tenant (404 otherwise) whom the actor may manage (403 otherwise). */
function checkTarget(actor: TeamActor, member: MemberRow | undefined): MemberRow {
  if (!member) throw notFound('member');
  if (!canManageRole(actor.role, member.role)) throw new AppError('forbidden', `only an owner can change or remove a member with the ${member.role} role`);
  // The platform's super-admin user is managed by the operator (MAILPATH_ADMIN_EMAIL), not from the team page.
  if (member.is_super_admin) throw new AppError('forbidden', 'the super-admin user cannot be changed or removed here');
  return member;
}

/** Changes a member's role. Giving or taking the owner role needs an owner; the last owner cannot be demoted (409). */
export async function changeRole(deps: TeamDeps, tenantId: string, actor: TeamActor, memberId: string, role: UserRole): Promise<MemberRow> {
  if (!isUuid(memberId)) throw notFound('member');
  if (!canManageRole(actor.role, role)) throw new AppError('forbidden', `only an owner can give the ${role} role`);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    await lockTeam(tx, tenantId);
    const member = checkTarget(actor, await findMember(tx, tenantId, memberId));
    if (member.role === role) return member;
    if (member.role === 'owner' && (await countOwners(tx, tenantId)) <= 1) throw lastOwner('cannot demote');
    await setMemberRole(tx, tenantId, memberId, role, at);
    await writeAudit(tx, {
      tenantId,
      actor: actor.audit,
      action: 'team.role_changed',
      resourceType: 'user',
      resourceId: memberId,
      metadata: { email: member.email, before: member.role, after: role },
      at,
    });
    return { ...member, role };
  });
}

/** Removes a member: their user is deleted, so their sessions stop working. The last owner cannot be removed (409). */
export async function removeMember(deps: TeamDeps, tenantId: string, actor: TeamActor, memberId: string): Promise<MemberRow> {
  if (!isUuid(memberId)) throw notFound('member');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    await lockTeam(tx, tenantId);
    const member = checkTarget(actor, await findMember(tx, tenantId, memberId));
    if (member.role === 'owner' && (await countOwners(tx, tenantId)) <= 1) throw lastOwner('cannot remove');
    await deleteMember(tx, tenantId, memberId);
    await writeAudit(tx, {
      tenantId,
      actor: actor.audit,
      action: 'team.member_removed',
      resourceType: 'user',
      resourceId: memberId,
      metadata: { email: member.email, role: member.role },
      at,
    });
    return member;
  });
}
