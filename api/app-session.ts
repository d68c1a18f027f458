// The dashboard's credential: the session JWT in an HttpOnly cookie no page script can read, and a CSRF token for the
// requests that change something. Bearer credentials are unchanged; a request with an Authorization header never
// looks at cookies.
import { parseCookie, stringifySetCookie } from 'cookie';
import CsrfTokens from '@fastify/csrf';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../shared/kernel/errors.js';

// __Host-: the browser only keeps it from this exact origin over HTTPS with Path=/ and no Domain, so a sibling
// subdomain cannot plant (toss) a session or a CSRF secret of its own.
export const SESSION_COOKIE = '__Host-mailpath_session';
export const CSRF_COOKIE = '__Host-mailpath_csrf';
/** The request header the dashboard sends its CSRF token in (the answer of every /auth/session route gives it). */
export const CSRF_HEADER = 'x-csrf-token';

// Callable without new (its typings declare the function form only).
const tokens = CsrfTokens();

const COOKIE_OPTIONS = { httpOnly: true, secure: true, sameSite: 'strict', path: '/' } as const;

/** Methods that change nothing: no CSRF token needed (a cross-site page cannot read their answers anyway). */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What the dashboard holds of a session: who it is, until when, and the token its writes carry. Never the JWT. */
export interface AppSession {
  user_id: string;
  tenant_id: string;
  expires_at: number;
  csrf_token: string;
}

/** A Set-Cookie line; without maxAge a cookie of the browser session (the CSRF secret). */
function setCookie(name: string, value: string, maxAge?: number): string {
  return stringifySetCookie({ name, value, ...COOKIE_OPTIONS, ...(maxAge !== undefined ? { maxAge } : {}) });
}

function cookies(request: FastifyRequest): Record<string, string | undefined> {
  const header = request.headers.cookie;
  return header ? parseCookie(header) : {};
}

/** The session JWT the request's cookie carries, if any. Read only when the request sent no Authorization header. */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  if (request.headers.cookie === undefined) return undefined;
  return cookies(request)[SESSION_COOKIE] || undefined;
}

/** An Authorization header that carries a credential: `Bearer <credential>`. */
export const BEARER = /^Bearer\s+(\S+)\s*$/i;

/**
 * The credential a request presents, as the guard reads it: the Authorization header's if it has one (such a request
 * never looks at cookies), else the session cookie's.
 */
export function presentedCredential(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  return header ? BEARER.exec(header)?.[1] : sessionCookieOf(request);
}

/**
 * A cookie-authenticated write must carry the token made from this browser's CSRF secret: a page of another site can
 * make the browser send the cookies (SameSite=Strict already stops most), never read the token to send it.
 */
export function assertCsrf(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const secret = cookies(request)[CSRF_COOKIE];
  const token = request.headers[CSRF_HEADER];
  if (!secret || typeof token !== 'string' || !tokens.verify(secret, token)) {
    throw new AppError('forbidden', `a signed-in dashboard request that changes something needs the ${CSRF_HEADER} header from GET /auth/session`);
  }
}

/**
 * Sets the session cookie (expiring with the JWT) and, unless the browser has one, a CSRF secret; answers what the
 * page may hold. A secret is kept across sign-ins of one browser, so tokens of other open tabs stay good.
 */
export function establishAppSession(
  request: FastifyRequest,
  reply: FastifyReply,
  session: { token: string; user_id: string; tenant_id: string; expires_at: number },
  nowSeconds: number,
): AppSession {
  const maxAge = Math.max(0, session.expires_at - nowSeconds);
  let secret: string | undefined = cookies(request)[CSRF_COOKIE];
  const set = [setCookie(SESSION_COOKIE, session.token, maxAge)];
  if (!secret) {
    secret = tokens.secretSync();
    set.push(setCookie(CSRF_COOKIE, secret));
  }
  reply.header('set-cookie', set);
  return { user_id: session.user_id, tenant_id: session.tenant_id, expires_at: session.expires_at, csrf_token: tokens.create(secret) };
}

/** A fresh CSRF token for the signed-in browser (a reloaded page has lost the one it held), its secret set if missing. */
export function csrfTokenFor(request: FastifyRequest, reply: FastifyReply): string {
  let secret: string | undefined = cookies(request)[CSRF_COOKIE];
  if (!secret) {
    secret = tokens.secretSync();
    reply.header('set-cookie', setCookie(CSRF_COOKIE, secret));
  }
  return tokens.create(secret);
}

/** Signs the browser out: both cookies expire now. */
export function clearAppSession(reply: FastifyReply): void {
  reply.header('set-cookie', [setCookie(SESSION_COOKIE, '', 0), setCookie(CSRF_COOKIE, '', 0)]);
}
