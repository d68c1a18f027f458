// What a license key validates: a self-hosted instance's entitlement to a plan (for a tenant, until an expiry), proven by our Ed25519 signature and not
// revoked since.
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { isUuid } from '../../kernel/ids.js';
import { findLicenseKeyById } from './queries.js';
import { verificationKey } from './signing-key.js';
import { licenseKid, verifyLicenseToken, type InvalidReason, type LicenseClaims } from './tokens.js';

export type LicenseValidation = { valid: true; license: LicenseClaims } | { valid: false; reason: InvalidReason };

/**
 * Validates a license key, in this order: its shape (a compact JWS of type mailpath-license+jwt), its signature by
 * a signing key of this Mailpath, its expiry (against the injected clock), then its record: revoked → revoked; no
 * record (its tenant was deleted with it) → unknown. The record is read on every call, so a revocation applies
 * at the key's next validation.
 */
export async function validateLicenseKey(deps: { sql: Sql; clock: Clock }, token: string): Promise<LicenseValidation> {
  const kid = licenseKid(token);
  if (!kid) return { valid: false, reason: 'malformed' };
  const publicKey = await verificationKey(deps.sql, kid);
  // A kid we never had: the key was not signed here, whatever it claims.
  if (!publicKey) return { valid: false, reason: 'invalid_signature' };
  const verified = await verifyLicenseToken(token, publicKey, deps.clock.now());
  if (!verified.ok) return { valid: false, reason: verified.reason };
  const row = isUuid(verified.claims.id) ? await findLicenseKeyById(deps.sql, verified.claims.id) : undefined;
  if (!row || row.key !== token) return { valid: false, reason: 'unknown' };
  if (row.revoked_at) return { valid: false, reason: 'revoked' };
  return { valid: true, license: verified.claims };
}
