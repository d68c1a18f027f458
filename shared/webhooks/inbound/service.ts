// A tenant's inbound webhook settings: read them, and change URL, switch and secret (revealed once, when created or rotated), audited.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import type { DnsResolver } from '../../kernel/dns.js';
import { validationError } from '../../kernel/errors.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { findWebhookSettings, lockWebhookSettings, updateWebhookSettings, type WebhookSettingsRow } from './queries.js';
import { generateSecret, sealSecret } from './secret.js';
import { checkWebhookUrl, UrlPolicyError } from './url-policy.js';

export interface WebhookSettingsDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  /** MAILPATH_DNS_SERVERS: the URL's host is resolved through it, as deliveries do. */
  dns: DnsResolver;
  vault: SealedBox;
}

export interface WebhookSettingsView {
  webhook_url: string | null;
  enabled: boolean;
  /** The secret in clear: only in the answer that created or rotated it, null otherwise. */
  secret: string | null;
  secret_revealed_once: boolean;
  secret_rotated_at: Date | null;
  updated_at: Date | null;
}

export interface WebhookSettingsPatch {
  /** null removes the URL (and, unless `enabled` says otherwise, switches the webhook off). */
  webhook_url?: string | null | undefined;
  enabled?: boolean | undefined;
}

const view = (row: WebhookSettingsRow | undefined, secret: string | null = null): WebhookSettingsView => ({
  webhook_url: row?.webhook_url ?? null,
  enabled: row?.enabled ?? false,
  secret,
  secret_revealed_once: secret !== null,
  secret_rotated_at: row?.secret_rotated_at ?? null,
  updated_at: row?.updated_at ?? null,
});

/** The settings without the secret; a tenant that never configured a webhook reads as off and empty. */
export async function getWebhookSettings(deps: WebhookSettingsDeps, tenantId: string): Promise<WebhookSettingsView> {
  return view(await findWebhookSettings(deps.sql, tenantId));
}

/** The URL as stored and POSTed to (WHATWG serialization), after the policy and DNS check; 422 naming webhook_url. */
async function checkedUrl(deps: WebhookSettingsDeps, text: string): Promise<string> {
  try {
    return (await checkWebhookUrl(text, deps.config.webhooks, deps.dns)).url.href;
  } catch (err) {
    if (err instanceof UrlPolicyError) throw validationError('webhook_url', err.message);
    throw err;
  }
}

/**
 * Applies a partial change. The first change creates the secret, and `rotateSecret` replaces it;
 * either way the new secret is in this answer and in no later one. Enabling needs a URL.
 * A change that changes nothing writes nothing (no audit row).
 */
export async function updateWebhookSettingsFor(
  deps: WebhookSettingsDeps,
  tenantId: string,
  actor: AuditActor,
  patch: WebhookSettingsPatch,
  options: { rotateSecret: boolean },
): Promise<WebhookSettingsView> {
  // The look-up happens before the transaction: no row stays locked while DNS answers.
  const url = typeof patch.webhook_url === 'string' ? await checkedUrl(deps, patch.webhook_url) : patch.webhook_url;
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await lockWebhookSettings(tx, tenantId, at);
    const created = row.secret_sealed === null;
    const webhookUrl = url === undefined ? row.webhook_url : url;
    const enabled = patch.enabled ?? (url === null ? false : row.enabled);
    if (enabled && webhookUrl === null) throw validationError('webhook_url', 'is required to enable the webhook');
    const changed = [...(webhookUrl !== row.webhook_url ? ['webhook_url'] : []), ...(enabled !== row.enabled ? ['enabled'] : [])];
    const secret = created || options.rotateSecret ? generateSecret() : null;
    if (changed.length === 0 && secret === null) return view(row);
    const updated = await updateWebhookSettings(tx, tenantId, {
      webhookUrl,
      enabled,
      secretSealed: secret === null ? row.secret_sealed : sealSecret(deps.vault, tenantId, secret),
      secretRotatedAt: secret === null ? row.secret_rotated_at : at,
      at,
    });
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'inbound_webhook.updated',
      resourceType: 'inbound_webhook',
      resourceId: tenantId,
      // Never the secret itself: only that it was created or replaced.
      metadata: { changed, webhook_url: webhookUrl, enabled, secret_created: created, secret_rotated: !created && options.rotateSecret },
      at,
    });
    return view(updated, secret);
  });
}
