// The license key itself: a compact JWS (EdDSA over Ed25519) whose claims say which plan it entitles, for which tenant and until when.
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from 'jose';
import type { KeyObject } from 'node:crypto';
import type { LicenseSigningKey } from './signing-key.js';

/** The JWS typ header of license keys, so no other token signed by any key is ever taken for one. */
export const LICENSE_TOKEN_TYPE = 'mailpath-license+jwt';
export const LICENSE_ALGORITHM = 'EdDSA';

export interface LicenseClaims {
  /** The license key's id (jti). */
  id: string;
  plan_id: string;
  tenant_id: string | null;
  issued_at: Date;
  expires_at: Date | null;
  /** The issuing Mailpath (its public URL). */
  issuer: string;
}

const seconds = (d: Date) => Math.floor(d.getTime() / 1000);

export async function signLicense(key: LicenseSigningKey, claims: LicenseClaims): Promise<string> {
  const payload: JWTPayload & { plan_id: string; tenant_id?: string } = {
    plan_id: claims.plan_id,
    ...(claims.tenant_id ? { tenant_id: claims.tenant_id } : {}),
  };
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: LICENSE_ALGORITHM, typ: LICENSE_TOKEN_TYPE, kid: key.kid })
    .setJti(claims.id)
    .setIssuer(claims.issuer)
    .setIssuedAt(seconds(claims.issued_at));
  if (claims.expires_at) jwt.setExpirationTime(seconds(claims.expires_at));
  return jwt.sign(key.privateKey);
}

/** Why a key is not valid: not a license key at all, a signature that does not verify, past its expiry, revoked, or not (any longer) on record. */
export type InvalidReason = 'malformed' | 'invalid_signature' | 'expired' | 'revoked' | 'unknown';

export type VerifiedToken = { ok: true; claims: LicenseClaims } | { ok: false; reason: InvalidReason };

/** The kid a token's header names, or undefined when the token is not a license key's shape. */
export function licenseKid(token: string): string | undefined {
  try {
    const header = decodeProtectedHeader(token);
    return header.alg === LICENSE_ALGORITHM && header.typ === LICENSE_TOKEN_TYPE && typeof header.kid === 'string' ? header.kid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Checks the signature first, then the expiry against `now` (no leeway: the expiry is the entitlement's end).
 * A token whose claims were edited fails as invalid_signature; one that is not a JWS at all as malformed.
 */
export async function verifyLicenseToken(token: string, publicKey: KeyObject, now: Date): Promise<VerifiedToken> {
  try {
    const { payload } = await jwtVerify(token, publicKey, {
      algorithms: [LICENSE_ALGORITHM],
      typ: LICENSE_TOKEN_TYPE,
      currentDate: now,
      requiredClaims: ['jti', 'iat'],
    });
    if (typeof payload['plan_id'] !== 'string' || typeof payload.jti !== 'string') return { ok: false, reason: 'malformed' };
    const tenant = payload['tenant_id'];
    return {
      ok: true,
      claims: {
        id: payload.jti,
        plan_id: payload['plan_id'],
        tenant_id: typeof tenant === 'string' ? tenant : null,
        issued_at: new Date(payload.iat! * 1000),
        expires_at: payload.exp === undefined ? null : new Date(payload.exp * 1000),
        issuer: payload.iss ?? '',
      },
    };
  } catch (err) {
    if (err instanceof joseErrors.JWSSignatureVerificationFailed) return { ok: false, reason: 'invalid_signature' };
    if (err instanceof joseErrors.JWTExpired) return { ok: false, reason: 'expired' };
    return { ok: false, reason: 'malformed' };
  }
}
