// Authentication (bearer credential → principal) and authorization (route mode, scope) for API requests.
import type { FastifyContextConfig, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/kernel/errors.js';
import type { Principal } from '../../shared/accounts/auth/principal.js';
import { scopeRefusal } from '../../shared/accounts/keys/scopes.js';
import { resolveMailboxSession } from '../../shared/inbound/workspace-mailboxes/sessions.js';
import type { ApiContext } from '../context.js';
import { assertCsrf, BEARER, sessionCookieOf } from '../app-session.js';

export type AuthOutcome = { principal: Principal; error?: undefined } | { principal?: undefined; error: AppError | undefined };

const PUBLIC: AuthOutcome = { error: undefined };

/**
 * Resolves the request's credential for routes that need one; public routes resolve nothing. Without a promise
 * when nothing needs waiting for (a public route, a missing header, an API key whose record is cached): most
 * requests, which then cost no microtask here.
 */
export function authenticate(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig): AuthOutcome | Promise<AuthOutcome> {
  if ((config.auth ?? 'public') === 'public') return PUBLIC;
  const header = request.headers.authorization;
  if (!header) {
    const cookie = sessionCookieOf(request);
    if (cookie) return cookieSession(ctx, request, cookie);
    return { error: new AppError('unauthenticated', 'missing credential: send Authorization: Bearer <JWT or API key>') };
  }
  const match = BEARER.exec(header);
  if (!match) return { error: new AppError('unauthenticated', 'unparseable Authorization header: expected Bearer <credential>') };
  const credential = match[1]!;
  if (ctx.credentials.isApiKey(credential)) {
    const cached = ctx.credentials.cachedKey(credential);
    if (cached) return { principal: cached };
    if (cached === null) return { error: refused() };
  }
  return lookUp(ctx, credential);
}

const refused = () => new AppError('unauthenticated', 'invalid, revoked or expired credential');

async function lookUp(ctx: ApiContext, credential: string): Promise<AuthOutcome> {
  const principal =
    (await ctx.credentials.resolve(credential)) ?? (ctx.credentials.isApiKey(credential) ? undefined : await resolveMailboxSession(ctx, credential));
  if (!principal) return { error: refused() };
  return { principal };
}

/**
 * The dashboard's session cookie: a user's session JWT only (never a key or a mailbox session), and for a write the
 * CSRF token besides (api/app-session.ts).
 */
async function cookieSession(ctx: ApiContext, request: FastifyRequest, credential: string): Promise<AuthOutcome> {
  try {
    assertCsrf(request);
  } catch (err) {
    return { error: err as AppError };
  }
  if (ctx.credentials.isApiKey(credential)) return { error: refused() };
  const principal = await ctx.credentials.resolve(credential);
  if (principal?.kind !== 'user') return { error: refused() };
  return { principal };
}

/** Throws 403 when the principal may not call a route of this config. */
export function authorize(principal: Principal, config: FastifyContextConfig): void {
  const mode = config.auth ?? 'public';
  // Opt-in, so a route added later is closed to mailbox sessions unless it says otherwise.
  if (principal.kind === 'mailbox' && mode !== 'any_or_mailbox') {
    throw new AppError('forbidden', 'a mailbox session may only read its own mailbox under /mail/messages');
  }
  if ((mode === 'user' || mode === 'super_admin') && principal.kind !== 'user') {
    throw new AppError('forbidden', 'this route needs a user session (JWT); API keys cannot call it');
  }
  if (mode === 'super_admin' && !principal.user?.is_super_admin) {
    throw new AppError('forbidden', 'this route is for super-admins only');
  }
  if (config.scope && principal.kind === 'api_key') {
    const refusal = scopeRefusal(principal.scopes, config.scope);
    if (refusal !== undefined) throw new AppError('invalid_scope', refusal);
  }
}
