// The user roles and what each may do: the one place the role policy is written down (the guard and team rules read it).
import type { Principal } from '../auth/principal.js';
import type { UserRole } from '../auth/users.js';
import { AppError } from '../../kernel/errors.js';

/**
 * Role policy (for users signed in with a session; an API key carries its creator's role at creation as a ceiling,
 * on top of its scopes):
 *
 * - viewer: reads everything of its tenant (every GET), and its own account flows under /auth/ (2FA, password).
 *   No other POST, PUT, PATCH or DELETE.
 * - developer: everything a viewer may, plus every write route not marked otherwise: API keys, templates,
 *   domains, suppressions, sends, mailboxes, webhook settings. Not the team.
 * - admin: everything a developer may, plus the team: invites, role changes and removal of admins, developers
 *   and viewers. An admin cannot invite, promote to, demote or remove an owner.
 * - owner: everything, including managing owners (the last owner can be neither demoted nor removed) and the
 *   owner-only routes (marked `role: 'owner'`, e.g. the audit PDF export; billing-like settings belong there too).
 *
 * A route states the least role it needs with `role` in its definition (api/route.ts); without one, reads need
 * viewer, /auth/ routes viewer, and any other write developer (defaultRouteRole). The guard checks it next to scopes.
 */
export const ROLES = ['viewer', 'developer', 'admin', 'owner'] as const satisfies readonly UserRole[];

const RANK: Record<UserRole, number> = { viewer: 0, developer: 1, admin: 2, owner: 3 };

export function isRole(value: string): value is UserRole {
  return (ROLES as readonly string[]).includes(value);
}

/** True when `role` is `required` or above it. */
export function roleAtLeast(role: UserRole, required: UserRole): boolean {
  return RANK[role] >= RANK[required];
}

/** The least role a route needs when its definition names none. `path` is relative to /api/v1 (or '' when unknown). */
export function defaultRouteRole(method: string, path: string): UserRole {
  if (method === 'GET' || method === 'HEAD' || method === 'OPTIONS') return 'viewer';
  // The caller's own account (2FA, password): every role manages its own sign-in.
  if (path.startsWith('/auth/')) return 'viewer';
  return 'developer';
}

/**
 * Whether a member of role `actor` may give, change or take away the role `target` (invite with it, change a
 * member who has it, change a member to it, remove a member who has it). Owners manage anyone; admins anyone
 * but owners; developers and viewers nobody.
 */
export function canManageRole(actor: UserRole, target: UserRole): boolean {
  if (actor === 'owner') return true;
  if (actor === 'admin') return target !== 'owner';
  return false;
}

/**
 * Throws 403 forbidden when the caller's role is below `required`. A user has its role; an API key the role its
 * creator had when making it (its ceiling: a key never reaches what its maker could not); mailbox sessions pass
 * (they reach only their own mailbox's routes).
 */
export function requireRole(principal: Principal, required: UserRole): void {
  if (principal.kind === 'user' && !roleAtLeast(principal.user!.role, required)) {
    throw new AppError('forbidden', `this action needs the ${required} role or higher; your role is ${principal.user!.role}`);
  }
  if (principal.kind === 'api_key' && !roleAtLeast(principal.key!.role, required)) {
    throw new AppError(
      'forbidden',
      `this action needs the ${required} role or higher; this API key's ceiling is ${principal.key!.role}, the role of the user who made it`,
    );
  }
}
