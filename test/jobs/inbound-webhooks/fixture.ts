// Rows for the inbound-webhook tests, written directly (as the MX would): a stored message, its tenant recipient, a pending delivery, and webhook settings.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../../shared/db/connection.js';
import { generateSecret, sealSecret } from '../../../shared/webhooks/inbound/secret.js';
import type { SealedBox } from '../../../shared/kernel/secrets/sealed-box.js';

/** A message with bytes a lax receiver might mangle: CRLF, a bare LF, 8-bit UTF-8, a NUL and a trailing space. */
export const SAMPLE_RAW = Buffer.concat([
  Buffer.from(
    'Received: from mail.sender.example ([192.0.2.7]) by mx.mailpath.local\r\n' +
      'From: Ann <ann@sender.example>\r\nTo: support@acme.example\r\nSubject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe?=\r\n' +
      'Message-ID: <m1@sender.example>\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n' +
      'Grüße aus Köln \r\nline with bare LF\nend\r\n',
    'utf8',
  ),
  Buffer.from([0x00, 0x0d, 0x0a]),
]);

export interface InboundDelivery {
  messageId: string;
  recipientId: string;
  deliveryId: string;
  recipient: string;
  raw: Buffer;
}

/** One stored message with one tenant recipient and its pending delivery (attempts 0), due at `at` (given) or whatever the test's clock says. */
export async function insertInboundDelivery(
  sql: Sql,
  tenantId: string,
  options: { raw?: Buffer; recipient?: string; at?: Date } = {},
): Promise<InboundDelivery> {
  const raw = options.raw ?? SAMPLE_RAW;
  const recipient = options.recipient ?? `support-${randomUUID().slice(0, 8)}@acme.example`;
  const at = options.at ?? new Date();
  const messageId = randomUUID();
  const recipientId = randomUUID();
  const deliveryId = randomUUID();
  await sql`
    insert into inbound_messages (id, received_at, remote_address, helo, mail_from, size_bytes, raw, header_from, subject)
    values (${messageId}, ${at}, '192.0.2.7', 'mail.sender.example', 'ann@sender.example', ${raw.length}, ${raw}, 'ann@sender.example', 'Grüße')`;
  await sql`
    insert into inbound_recipients (id, message_id, recipient, kind, tenant_id, created_at)
    values (${recipientId}, ${messageId}, ${recipient}, 'tenant', ${tenantId}, ${at})`;
  const due = options.at ?? new Date(0);
  await sql`
    insert into inbound_webhook_deliveries (id, tenant_id, inbound_recipient_id, status, attempts, next_attempt_at, created_at)
    values (${deliveryId}, ${tenantId}, ${recipientId}, 'pending', 0, ${due}, ${at})`;
  return { messageId, recipientId, deliveryId, recipient, raw };
}

/** Webhook settings as the API stores them; returns the secret in clear. */
export async function configureWebhook(
  sql: Sql,
  vault: SealedBox,
  tenantId: string,
  settings: { url: string | null; enabled?: boolean; secret?: string },
): Promise<string> {
  const secret = settings.secret ?? generateSecret();
  const sealed = sealSecret(vault, tenantId, secret);
  await sql`
    insert into inbound_webhooks (tenant_id, webhook_url, enabled, secret_sealed, secret_rotated_at, updated_at)
    values (${tenantId}, ${settings.url}, ${settings.enabled ?? true}, ${sealed}, now(), now())
    on conflict (tenant_id) do update
    set webhook_url = excluded.webhook_url, enabled = excluded.enabled, secret_sealed = excluded.secret_sealed, updated_at = now()`;
  return secret;
}

export interface DeliveryState {
  status: 'pending' | 'delivered' | 'dead';
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  dead_at: Date | null;
}

export async function deliveryState(sql: Sql, id: string): Promise<DeliveryState> {
  const [row] = await sql<DeliveryState[]>`
    select status, attempts, last_status, last_error, next_attempt_at, last_attempt_at, delivered_at, dead_at
    from inbound_webhook_deliveries where id = ${id}`;
  return row!;
}
