// Who is signed in: the dashboard session (from the cookie, via GET /auth/session) and the caller's identity
// (GET /whoami), as signals every page reads.
import { signal } from '@preact/signals';
import { ApiError, api, setCsrfToken, unwrap, whenSignedOut } from './api';

export type Identity = NonNullable<Awaited<ReturnType<typeof loadIdentity>>>;

/** undefined while the first check runs; null when signed out. */
export const identity = signal<Identity | null | undefined>(undefined);

async function loadIdentity() {
  return unwrap(api.GET('/whoami'));
}

/** Holds a session the API handed out (sign-in, registration, invite) and loads who it is. */
export async function adoptSession(session: { csrf_token: string }): Promise<void> {
  setCsrfToken(session.csrf_token);
  identity.value = await loadIdentity();
}

/** At start: is this browser signed in? */
export async function restoreSession(): Promise<void> {
  try {
    const session = await unwrap(api.GET('/auth/session'));
    await adoptSession(session);
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      identity.value = null;
      return;
    }
    throw err;
  }
}

/** Roles in the order the API ranks them (shared/accounts/team/roles.ts): a page hides what the role cannot do. */
const RANK = ['viewer', 'developer', 'admin', 'owner'];
export function hasRole(who: Identity | null | undefined, least: 'viewer' | 'developer' | 'admin' | 'owner'): boolean {
  const role = who?.user?.role;
  return role !== undefined && RANK.indexOf(role) >= RANK.indexOf(least);
}

export async function signOut(): Promise<void> {
  await unwrap(api.DELETE('/auth/session')).catch(() => undefined);
  setCsrfToken(undefined);
  identity.value = null;
}

whenSignedOut(() => {
  setCsrfToken(undefined);
  identity.value = null;
});
