// Team fixtures for tests: invite someone with a role through the API and accept, returning their session.
import type { FastifyInstance } from 'fastify';
import type { UserRole } from '../../shared/accounts/auth/users.js';
import { call, type TestTenant } from './app.js';

export const MEMBER_PASSWORD = 'Member-pass-42';

export interface TestMember {
  token: string;
  userId: string;
  email: string;
  role: UserRole;
}

let counter = 0;

/** Invites (as `inviter`, an owner or admin session) and returns the raw invite answer. */
export async function inviteMember(app: FastifyInstance, inviterToken: string, role: UserRole, email?: string) {
  counter++;
  const address = email ?? `member-${process.pid}-${counter}-${Math.random().toString(36).slice(2, 7)}@example.test`;
  const res = await call(app, 'POST', '/team/invites', { token: inviterToken, body: { email: address, role } });
  if (res.status !== 201) throw new Error(`invite failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data as { id: string; email: string; role: UserRole; token: string; accept_url: string; expires_at: string; email_sent: boolean };
}

/** A new member of the owner's tenant with this role, signed in. */
export async function addMember(app: FastifyInstance, owner: TestTenant, role: UserRole): Promise<TestMember> {
  const invite = await inviteMember(app, owner.token, role);
  const res = await call(app, 'POST', '/auth/accept-invite', { body: { token: invite.token, password: MEMBER_PASSWORD } });
  if (res.status !== 200) throw new Error(`accept failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { token: res.body.data.token, userId: res.body.data.user_id, email: invite.email, role };
}
