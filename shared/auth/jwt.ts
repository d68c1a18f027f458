// Session tokens: HS256 JWTs (jose) carrying the user and the tenant.
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import type { Config } from '../config.js';
import { loadOrCreate } from '../data-dir.js';

export interface SessionClaims {
  userId: string;
  tenantId: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
}

const ISSUER = 'mailpath';
const AUDIENCE = 'mailpath-api';

export class SessionTokens {
  private constructor(private readonly key: Uint8Array) {}

  static async create(config: Config): Promise<SessionTokens> {
    const secret =
      config.jwtSecret ?? (await loadOrCreate(config.dataDir, 'jwt-secret', () => randomBytes(48).toString('base64url')));
    return new SessionTokens(new TextEncoder().encode(secret));
  }

  async issue(c: { userId: string; tenantId: string; ttlSeconds: number; now: Date }): Promise<{ token: string; expiresAt: number }> {
    const iat = Math.floor(c.now.getTime() / 1000);
    const exp = iat + c.ttlSeconds;
    const jwt = new SignJWT({ tid: c.tenantId })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(c.userId)
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomBytes(12).toString('base64url'));
    return { token: await jwt.sign(this.key), expiresAt: exp };
  }

  /** Returns the claims of a valid, unexpired token, or undefined for anything else. */
  async verify(token: string, now: Date): Promise<SessionClaims | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
        currentDate: now,
      });
      if (typeof payload.sub !== 'string' || typeof payload['tid'] !== 'string') return undefined;
      return {
        userId: payload.sub,
        tenantId: payload['tid'],
        issuedAt: payload.iat ?? 0,
        expiresAt: payload.exp ?? 0,
      };
    } catch (err) {
      if (err instanceof joseErrors.JOSEError) return undefined;
      throw err;
    }
  }
}
