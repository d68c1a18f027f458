// The webhook signing secret: generated, sealed at rest under the master key, and the X-MP-Inbound-Sig HMAC made with it.
import { createHmac, randomBytes } from 'node:crypto';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';

export const SECRET_PREFIX = 'whsec_';
export const SIGNATURE_HEADER = 'x-mp-inbound-sig';

/** whsec_ + 32 random bytes in base64url (43 characters). The whole string, prefix included, is the HMAC key. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/** Associated data binding a sealed secret to its tenant: copied into another tenant's row, it does not open. */
const sealContext = (tenantId: string) => `inbound-webhook-secret:${tenantId}`;

/** The sealed form stored in inbound_webhooks.secret_sealed (base64 text). */
export function sealSecret(vault: SealedBox, tenantId: string, secret: string): string {
  return vault.seal(secret, sealContext(tenantId)).toString('base64');
}

/** Opens a stored secret; throws SealError with another master key or a tampered value. */
export function openSecret(vault: SealedBox, tenantId: string, sealed: string): string {
  return vault.open(Buffer.from(sealed, 'base64'), sealContext(tenantId)).toString('utf8');
}

/** `hmac-sha256=<lowercase hex>` of the exact body bytes, keyed with the secret's UTF-8 bytes. */
export function signBody(body: Buffer, secret: string): string {
  return `hmac-sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
