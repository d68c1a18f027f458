// Session tokens: HS256 JWTs (jose) carrying the user and the tenant.
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors, type JWTPayload } from 'jose';
import type { Config } from '../../config/index.js';
import { loadOrCreate } from '../../kernel/data-dir.js';

export interface SessionClaims {
  userId: string;
  tenantId: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  /**
   * Milliseconds since the epoch (claim `iat_ms`; iat × 1000 for a token without it). Compared with a password
   * change instant, so a token issued in the same second before the change does not survive it.
   */
  issuedAtMs: number;
  expiresAt: number;
  /** The token's jti: what a sign-out revokes (revoked_sessions), so only this session ends, not the user's others. */
  sessionId?: string;
  /**
   * Set on an impersonation token (claims is_impersonating and impersonator_user_id): the super-admin who minted it.
   * Equal to userId: the session is the super-admin's, scoped to another tenant (tenantId).
   */
  impersonatorUserId?: string;
}

export interface MailboxClaims {
  mailboxId: string;
  tenantId: string;
  issuedAt: number;
  /** Milliseconds since the epoch, as for sessions: compared with the time the mailbox password was set. */
  issuedAtMs: number;
  expiresAt: number;
}

const ISSUER = 'mailpath';
// Every token kind must carry `exp` (jose checks it only when present: a token without one would never expire) and `iat`
// (compared with password changes).
const REQUIRED_CLAIMS = ['exp', 'iat'];
const AUDIENCE = 'mailpath-api';
// Mailbox sessions get an audience of their own, so verify() never takes one for a user session.
const MAILBOX_AUDIENCE = 'mailpath-mailbox';
// The token between a password login and its 2FA challenge: an audience and a purpose claim of its own,
// so it is accepted at POST /auth/2fa/challenge only and never as a session.
const TOTP_AUDIENCE = 'mailpath-totp-challenge';
const TOTP_PURPOSE = 'totp_challenge';
// The issue instant to the millisecond (iat has whole seconds only).
const IAT_MS = 'iat_ms';

function issuedAtMs(payload: JWTPayload): number {
  const ms = payload[IAT_MS];
  return typeof ms === 'number' && Number.isFinite(ms) ? ms : (payload.iat ?? 0) * 1000;
}

export class SessionTokens {
  private constructor(private readonly key: Uint8Array) {}

  static async create(config: Config): Promise<SessionTokens> {
    const secret = config.jwtSecret ?? (await loadOrCreate(config.dataDir, 'jwt-secret', () => randomBytes(48).toString('base64url')));
    return new SessionTokens(new TextEncoder().encode(secret));
  }

  async issue(c: { userId: string; tenantId: string; ttlSeconds: number; now: Date; impersonating?: boolean }): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(c.now.getTime() / 1000);
    const exp = iat + c.ttlSeconds;
    const impersonation = c.impersonating ? { is_impersonating: true, impersonator_user_id: c.userId } : {};
    const jwt = new SignJWT({ tid: c.tenantId, [IAT_MS]: c.now.getTime(), ...impersonation })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(c.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString('base64url'));
    return { token: await jwt.sign(this.key), expiresAt: exp };
  }

  /** A session limited to one workspace mailbox (claims tid and mbx; the subject is the mailbox id). */
  async issueMailbox(c: { mailboxId: string; tenantId: string; ttlSeconds: number; now: Date }): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(c.now.getTime() / 1000);
    const exp = iat + c.ttlSeconds;
    const jwt = new SignJWT({ tid: c.tenantId, mbx: c.mailboxId, [IAT_MS]: c.now.getTime() })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(c.mailboxId)
      .setIssuer(ISSUER)
      .setAudience(MAILBOX_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString('base64url'));
    return { token: await jwt.sign(this.key), expiresAt: exp };
  }

  /** The claims of a valid, unexpired mailbox session, or undefined for anything else (user sessions included). */
  async verifyMailbox(token: string, now: Date): Promise<MailboxClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: MAILBOX_AUDIENCE,
        algorithms: ['HS256'],
        currentDate: now,
        requiredClaims: REQUIRED_CLAIMS,
      });
      const mailboxId = payload['mbx'];
      if (typeof mailboxId !== 'string' || payload.sub !== mailboxId || typeof payload['tid'] !== 'string') return undefined;
      return { mailboxId, tenantId: payload['tid'], issuedAt: payload.iat ?? 0, issuedAtMs: issuedAtMs(payload), expiresAt: payload.exp ?? 0 };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
  }

  /** A short-lived token proving the password step of a login whose 2FA code is still due. */
  async issueTotpChallenge(c: { userId: string; tenantId: string; ttlSeconds: number; now: Date }): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(c.now.getTime() / 1000);
    const exp = iat + c.ttlSeconds;
    const jwt = new SignJWT({ tid: c.tenantId, pur: TOTP_PURPOSE, [IAT_MS]: c.now.getTime() })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(c.userId)
      .setIssuer(ISSUER)
      .setAudience(TOTP_AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString('base64url'));
    return { token: await jwt.sign(this.key), expiresAt: exp };
  }

  /** The claims of a valid, unexpired 2FA challenge token, or undefined for anything else (sessions included). */
  async verifyTotpChallenge(token: string, now: Date): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: TOTP_AUDIENCE,
        algorithms: ['HS256'],
        currentDate: now,
        requiredClaims: REQUIRED_CLAIMS,
      });
      if (payload['pur'] !== TOTP_PURPOSE || typeof payload.sub !== 'string' || typeof payload['tid'] !== 'string') return undefined;
      return { userId: payload.sub, tenantId: payload['tid'], issuedAt: payload.iat ?? 0, issuedAtMs: issuedAtMs(payload), expiresAt: payload.exp ?? 0 };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
  }

  /** Returns the claims of a valid, unexpired token, or undefined for anything else. */
  async verify(token: string, now: Date): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        currentDate: now,
        requiredClaims: REQUIRED_CLAIMS,
      });
      // A token minted for a purpose (the 2FA challenge) is never a session, whatever its audience.
      if (typeof payload.sub !== 'string' || typeof payload['tid'] !== 'string' || payload['pur'] !== undefined) return undefined;
      const impersonating = payload['is_impersonating'] === true;
      if (impersonating && payload['impersonator_user_id'] !== payload.sub) return undefined;
      return {
        userId: payload.sub,
        tenantId: payload['tid'],
        issuedAt: payload.iat ?? 0,
        issuedAtMs: issuedAtMs(payload),
        expiresAt: payload.exp ?? 0,
        ...(typeof payload.jti === 'string' ? { sessionId: payload.jti } : {}),
        ...(impersonating ? { impersonatorUserId: payload.sub } : {}),
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
  }
}
