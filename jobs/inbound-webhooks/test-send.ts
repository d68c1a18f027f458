// Test-send: a synthetic message signed and POSTed to the tenant's webhook exactly as a real delivery is, once, with the outcome reported.
import { randomUUID } from 'node:crypto';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Config } from '../../shared/config/index.js';
import type { Sql } from '../../shared/db/connection.js';
import type { DnsResolver } from '../../shared/kernel/dns.js';
import { conflict } from '../../shared/kernel/errors.js';
import { findWebhookSettings } from '../../shared/webhooks/inbound/queries.js';
import { openSecret } from '../../shared/webhooks/inbound/secret.js';
import type { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import type { WebhookTestResult } from '../../shared/webhooks/inbound/tester.js';
import { postToWebhook } from './deliver.js';
import { describeResult } from '../../shared/webhooks/retry-schedule.js';

export interface TestSendDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  dns: DnsResolver;
  vault: SealedBox;
}

/** The local part of the synthetic recipient (X-MP-Inbound-Recipient) at MAILPATH_HOSTNAME. */
export const TEST_RECIPIENT_LOCAL = 'webhook-test';

/** A small RFC 822 message (CRLF line ends) from and to the service's own host, plainly a test. */
export function composeTestMessage(hostname: string, tenantId: string, at: Date): Promise<Buffer> {
  const mail = new MailComposer({
    from: { name: 'Mailpath', address: `no-reply@${hostname}` },
    to: `${TEST_RECIPIENT_LOCAL}@${hostname}`,
    subject: 'Mailpath inbound webhook test',
    text:
      'This is a test message from Mailpath, sent by POST /settings/inbound-webhook/test-send.\r\n' +
      'It is signed like real inbound mail: check X-MP-Inbound-Sig against these exact bytes.\r\n',
    headers: { 'X-MP-Tenant': tenantId },
    messageId: `<webhook-test-${randomUUID()}@${hostname}>`,
    date: at,
  }).compile();
  return new Promise((resolve, reject) => mail.build((err, message) => (err ? reject(err) : resolve(message))));
}

/**
 * POSTs a synthetic message once, no retries, whether or not the webhook is enabled (so it can be
 * tried before it is switched on). 409 conflict when no webhook URL is configured: the request is
 * fine, the tenant's state does not allow it yet.
 */
export async function testSendWebhook(deps: TestSendDeps, tenantId: string): Promise<WebhookTestResult> {
  const settings = await findWebhookSettings(deps.sql, tenantId);
  if (!settings?.webhook_url || !settings.secret_sealed) {
    throw conflict('no inbound webhook URL is configured: set one with PATCH /settings/inbound-webhook first');
  }
  const secret = openSecret(deps.vault, tenantId, settings.secret_sealed);
  const body = await composeTestMessage(deps.config.hostname, tenantId, deps.clock.now());
  const result = await postToWebhook(
    { dns: deps.dns, webhooks: deps.config.webhooks },
    {
      url: settings.webhook_url,
      secret,
      tenantId,
      recipient: `${TEST_RECIPIENT_LOCAL}@${deps.config.hostname}`,
      deliveryId: randomUUID(),
      attempt: 1,
      body,
      test: true,
    },
  );
  const delivered = result.kind === 'answered' && result.status >= 200 && result.status < 300;
  return {
    delivered,
    http_status: result.kind === 'answered' ? result.status : null,
    round_trip_ms: result.durationMs,
    error: delivered ? null : describeResult(result),
  };
}
