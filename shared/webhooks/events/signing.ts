// Event-webhook secrets (Standard Webhooks whsec_<base64 key>, sealed at rest per endpoint) and the webhook-* headers of a POST, signed with the
// standardwebhooks package.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';

export const SECRET_PREFIX = 'whsec_';
/** After a rotation the previous secret keeps signing this long, so receivers can switch without downtime. */
export const PREVIOUS_SECRET_VALIDITY_MS = 24 * 3600 * 1000;

/** whsec_ + 32 random bytes in standard base64: the bytes (not the text) are the HMAC key, as the scheme says. */
export function generateSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

/** Associated data binding a sealed secret to its endpoint: copied into another row, it does not open. */
const sealContext = (tenantId: string, webhookId: string) => `event-webhook-secret:${tenantId}:${webhookId}`;

export function sealSecret(vault: SealedBox, tenantId: string, webhookId: string, secret: string): string {
  return vault.seal(secret, sealContext(tenantId, webhookId)).toString('base64');
}

/** Throws SealError with another master key or a value moved from another endpoint. */
export function openSecret(vault: SealedBox, tenantId: string, webhookId: string, sealed: string): string {
  return vault.open(Buffer.from(sealed, 'base64'), sealContext(tenantId, webhookId)).toString('utf8');
}

/**
 * The Standard Webhooks headers of one POST. webhook-signature holds one `v1,<base64>` per secret,
 * space-separated (the current one first): a receiver accepts the message when any one verifies.
 */
export function signedHeaders(m: { id: string; at: Date; body: string; secrets: readonly string[] }): Record<string, string> {
  const signatures = m.secrets.map((secret) => new Webhook(secret).sign(m.id, m.at, m.body));
  return {
    'content-type': 'application/json',
    'user-agent': 'Mailpath-Event-Webhook/1',
    'webhook-id': m.id,
    'webhook-timestamp': String(Math.floor(m.at.getTime() / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}

/** The secrets that sign now: the current one, and the previous one while its 24 hours last. */
export function activeSecrets(
  vault: SealedBox,
  e: { tenant_id: string; id: string; secret_sealed: string; previous_secret_sealed: string | null; previous_secret_expires_at: Date | null },
  now: Date,
): string[] {
  const current = openSecret(vault, e.tenant_id, e.id, e.secret_sealed);
  const previousLive = e.previous_secret_sealed !== null && e.previous_secret_expires_at !== null && e.previous_secret_expires_at > now;
  return previousLive ? [current, openSecret(vault, e.tenant_id, e.id, e.previous_secret_sealed!)] : [current];
}

/** The exact bytes POSTed: the payload as stored, so every attempt of a delivery sends (and signs) the same body. */
export const bodyOf = (payload: unknown): string => JSON.stringify(payload);
