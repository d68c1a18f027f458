// Team invites: create (token shown once to the inviter and e-mailed when a system mailer is configured), list, revoke.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import type { SystemMailer } from '../../sending/system-mail/mailer.js';
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { UserRole } from '../auth/users.js';
import { AppError, conflict, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { canManageRole } from './roles.js';
import {
  findInvite,
  findPendingInviteByEmail,
  insertInvite,
  listPendingInvites,
  lockTeam,
  revokeInvite,
  userExistsWithEmail,
  type InviteRow,
} from './queries.js';

export interface TeamDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  log: Logger;
  /** Platform e-mails; `sent` is false when no system sender is configured (the message is logged instead). */
  systemMail: SystemMailer;
}

/** Who acts: the audit actor plus the role the team rules judge. */
export interface TeamActor {
  audit: AuditActor;
  role: UserRole;
}

/** The prefix makes a leaked token recognizable (secret scanners, logs); the 256 random bits make it unguessable. */
const TOKEN_PREFIX = 'mpi_';

export function hashInviteToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The dashboard page an invitee opens; it accepts the invite with POST /api/v1/auth/session/accept-invite. */
export function acceptUrl(publicUrl: URL, token: string): string {
  const url = new URL('/app/accept-invite', publicUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

export interface CreatedInvite {
  invite: InviteRow;
  token: string;
  accept_url: string;
  email_sent: boolean;
}

/**
 * Invites an address into the tenant with a role. 409 when the address already belongs to a user (e-mail
 * addresses are unique platform-wide) or has a pending invite here; 403 when the actor may not grant the role.
 */
export async function createInvite(
  deps: TeamDeps,
  tenant: { id: string; name: string },
  actor: TeamActor,
  input: { email: string; role: UserRole },
): Promise<CreatedInvite> {
  if (!canManageRole(actor.role, input.role))
    throw new AppError('forbidden', `a${actor.role === 'admin' ? 'n' : ''} ${actor.role} cannot invite with the ${input.role} role`);
  const email = input.email.trim().toLowerCase();
  const token = `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  const at = deps.clock.now();
  const expiresAt = new Date(at.getTime() + deps.config.auth.team_invite_ttl_hours * 3_600_000);
  const invite = await deps.sql.begin(async (tx) => {
    if (!(await lockTeam(tx, tenant.id))) throw notFound('tenant');
    if (await userExistsWithEmail(tx, email)) throw conflict('this e-mail address already belongs to a user');
    if (await findPendingInviteByEmail(tx, tenant.id, email, at)) {
      throw conflict('this e-mail address already has a pending invite; revoke it first to send a new one');
    }
    const row = await insertInvite(tx, {
      tenantId: tenant.id,
      email,
      role: input.role,
      tokenHash: hashInviteToken(token),
      invitedBy: actor.audit.type === 'user' ? actor.audit.id : null,
      at,
      expiresAt,
    });
    await writeAudit(tx, {
      tenantId: tenant.id,
      actor: actor.audit,
      action: 'team.invite_created',
      resourceType: 'team_invite',
      resourceId: row.id,
      metadata: { email, role: input.role, expires_at: expiresAt.toISOString() },
      at,
    });
    return row;
  });
  const url = acceptUrl(deps.config.publicUrl, token);
  return { invite, token, accept_url: url, email_sent: await mailInvite(deps, tenant.name, invite, url) };
}

/** E-mails the link through the system mailer; a failure is logged, never fails the invite (the link is in the answer). */
async function mailInvite(deps: TeamDeps, tenantName: string, invite: InviteRow, url: string): Promise<boolean> {
  const expires = invite.expires_at.toISOString().replace('T', ' ').slice(0, 16);
  const text =
    `You have been invited to join ${tenantName} on Mailpath with the ${invite.role} role.\n\n` +
    `Accept the invite and choose your password here:\n${url}\n\n` +
    `The link works once and expires on ${expires} UTC. If you did not expect this invite, ignore this message.\n`;
  try {
    const result = await deps.systemMail.send({ to: invite.email, subject: `Your invite to ${tenantName} on Mailpath`, text });
    return result.sent;
  } catch (err) {
    deps.log.warn({ err, invite_id: invite.id }, 'could not e-mail a team invite');
    return false;
  }
}

export function listInvites(deps: TeamDeps, tenantId: string): Promise<InviteRow[]> {
  return listPendingInvites(deps.sql, tenantId, deps.clock.now());
}

/** Revokes an unaccepted invite (its token then answers 410). Another tenant's, accepted or revoked: 404. */
export async function revokeTeamInvite(deps: TeamDeps, tenantId: string, actor: TeamActor, id: string): Promise<InviteRow> {
  if (!isUuid(id)) throw notFound('invite');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    await lockTeam(tx, tenantId);
    const invite = await findInvite(tx, tenantId, id);
    if (!invite || invite.accepted_at || invite.revoked_at) throw notFound('invite');
    if (!canManageRole(actor.role, invite.role)) throw new AppError('forbidden', `only an owner can revoke an invite with the ${invite.role} role`);
    const revoked = (await revokeInvite(tx, tenantId, id, at))!;
    await writeAudit(tx, {
      tenantId,
      actor: actor.audit,
      action: 'team.invite_revoked',
      resourceType: 'team_invite',
      resourceId: id,
      metadata: { email: invite.email, role: invite.role },
      at,
    });
    return revoked;
  });
}
