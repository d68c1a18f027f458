// Team routes for the signed-in user's tenant: invites (create, list, revoke) and members (list, change role, remove).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, type Principal } from '../../shared/accounts/auth/principal.js';
import { createInvite, listInvites, revokeTeamInvite, type TeamActor } from '../../shared/accounts/team/invites.js';
import { changeRole, listTeam, removeMember } from '../../shared/accounts/team/members.js';
import type { InviteRow, MemberRow } from '../../shared/accounts/team/queries.js';
import { ROLES } from '../../shared/accounts/team/roles.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Team'];
const role = z.enum(ROLES);

const invite = z.object({
  id: z.string(),
  email: z.string(),
  role,
  invited_by: z.string().nullable().describe('User id of the inviter (null once that user is removed)'),
  created_at: timestamp,
  expires_at: timestamp,
});

const member = z.object({
  id: z.string(),
  email: z.string(),
  first_name: z.string().nullable(),
  role,
  created_at: timestamp,
  two_factor_enabled: z.boolean(),
});

const presentInvite = (i: InviteRow) => ({
  id: i.id,
  email: i.email,
  role: i.role,
  invited_by: i.invited_by,
  created_at: iso(i.created_at),
  expires_at: iso(i.expires_at),
});

const presentMember = (m: MemberRow) => ({
  id: m.id,
  email: m.email,
  first_name: m.first_name,
  role: m.role,
  created_at: iso(m.created_at),
  two_factor_enabled: m.two_factor_enabled,
});

const RULES = ' Owners manage everyone; admins manage admins, developers and viewers but can neither give the owner role nor change or remove an owner (403).';

export const teamRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const actor = (p: Principal, ip: string): TeamActor => ({ audit: actorOf(p, ip), role: p.user!.role });

  defineRoute(app, {
    method: 'POST',
    url: '/team/invites',
    grantsAccess: true,
    auth: 'user',
    role: 'admin',
    tags: TAGS,
    summary: 'Invite someone into the team',
    description:
      'Creates a single-use invite that expires after `team_invite_ttl_hours` (config/auth.yaml, 7 days). The answer carries the token ' +
      'and the accept link (on MAILPATH_PUBLIC_URL); when a system mailer is configured the link is also e-mailed (`email_sent`). ' +
      'An address that already belongs to a user, or has a pending invite here, is 409.' +
      RULES,
    body: z.strictObject({ email: z.email().max(254), role }),
    status: 201,
    errors: [409],
    response: invite.extend({
      token: z.string().describe('The invite token, shown only here: POST it to /auth/accept-invite'),
      accept_url: z.string().describe('Link for the invitee'),
      email_sent: z.boolean().describe('Whether the link was e-mailed to the invitee'),
    }),
    handler: async ({ principal, body, ip }) => {
      const created = await createInvite(ctx, principal.tenant, actor(principal, ip), body);
      return { ...presentInvite(created.invite), token: created.token, accept_url: created.accept_url, email_sent: created.email_sent };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/team/invites',
    auth: 'user',
    role: 'admin',
    tags: TAGS,
    summary: 'List pending invites',
    description: 'Invites not yet accepted, revoked or expired, newest first.',
    response: z.object({ items: z.array(invite) }),
    handler: async ({ principal }) => ({ items: (await listInvites(ctx, principal.tenant.id)).map(presentInvite) }),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/team/invites/:id',
    auth: 'user',
    role: 'admin',
    tags: TAGS,
    summary: 'Revoke an invite',
    description: `The token stops working at once (410 when tried). An accepted or already revoked invite is 404.${RULES}`,
    params: idParam('id'),
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await revokeTeamInvite(ctx, principal.tenant.id, actor(principal, ip), params.id);
      return { status: 'revoked' };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/team/members',
    auth: 'user',
    tags: TAGS,
    summary: 'List team members',
    description: 'Every user of the tenant, oldest first, with their role and whether two-factor sign-in is on.',
    response: z.object({ items: z.array(member) }),
    handler: async ({ principal }) => ({ items: (await listTeam(ctx, principal.tenant.id)).map(presentMember) }),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/team/members/:id',
    grantsAccess: true,
    auth: 'user',
    role: 'admin',
    tags: TAGS,
    summary: "Change a member's role",
    description: `The tenant's last owner cannot be demoted (409): make another member owner first.${RULES}`,
    params: idParam('id'),
    body: z.strictObject({ role }),
    errors: [404, 409],
    response: member,
    handler: async ({ principal, params, body, ip }) => {
      const updated = await changeRole(ctx, principal.tenant.id, actor(principal, ip), params.id, body.role);
      ctx.credentials.forgetUser(updated.id);
      return presentMember(updated);
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/team/members/:id',
    auth: 'user',
    role: 'admin',
    tags: TAGS,
    summary: 'Remove a member',
    description:
      'Deletes the user: their sessions stop working at once (in other processes within `credential_cache_ms`). ' +
      "The tenant's last owner cannot be removed (409)." +
      RULES,
    params: idParam('id'),
    errors: [404, 409],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      const removed = await removeMember(ctx, principal.tenant.id, actor(principal, ip), params.id);
      ctx.credentials.forgetUser(removed.id);
      return { status: 'removed' };
    },
  });
};
