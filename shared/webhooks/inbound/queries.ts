// SQL for inbound webhooks: a tenant's settings (inbound_webhooks), and its deliveries: the claim with what a POST needs, the dead letters and
// replay (the outcome writer is the outbox's, shared/webhooks/outbox.ts).
import type { Queryable } from '../../db/connection.js';
import { claimDue, reviveDead, type Claim } from '../outbox.js';

export interface WebhookSettingsRow {
  tenant_id: string;
  webhook_url: string | null;
  enabled: boolean;
  /** Base64 of the sealed secret; null until the first configuration. */
  secret_sealed: string | null;
  secret_rotated_at: Date | null;
  updated_at: Date;
}

export async function findWebhookSettings(db: Queryable, tenantId: string): Promise<WebhookSettingsRow | undefined> {
  const [row] = await db<WebhookSettingsRow[]>`select * from inbound_webhooks where tenant_id = ${tenantId}`;
  return row;
}

/**
 * Takes the tenant's row for update inside `tx`, creating an empty one first when there is none.
 * Two first configurations at once therefore queue on one row: only one of them sees no secret.
 */
export async function lockWebhookSettings(tx: Queryable, tenantId: string, at: Date): Promise<WebhookSettingsRow> {
  await tx`
    insert into inbound_webhooks (tenant_id, webhook_url, enabled, updated_at)
    values (${tenantId}, null, false, ${at})
    on conflict (tenant_id) do nothing`;
  const [row] = await tx<WebhookSettingsRow[]>`select * from inbound_webhooks where tenant_id = ${tenantId} for update`;
  return row!;
}

export interface WebhookSettingsUpdate {
  webhookUrl: string | null;
  enabled: boolean;
  secretSealed: string | null;
  secretRotatedAt: Date | null;
  at: Date;
}

export async function updateWebhookSettings(tx: Queryable, tenantId: string, u: WebhookSettingsUpdate): Promise<WebhookSettingsRow> {
  const [row] = await tx<WebhookSettingsRow[]>`
    update inbound_webhooks
    set webhook_url = ${u.webhookUrl}, enabled = ${u.enabled}, secret_sealed = ${u.secretSealed},
        secret_rotated_at = ${u.secretRotatedAt}, updated_at = ${u.at}
    where tenant_id = ${tenantId}
    returning *`;
  return row!;
}

/** A claimed delivery with its recipient, the stored message and the tenant's current settings (null when it has none). */
export interface ClaimedDelivery {
  id: string;
  tenant_id: string;
  attempts: number;
  recipient: string;
  /** Null only if the message went between the claim's snapshot and now (deliveries cascade with it). */
  raw: Buffer | null;
  webhook_url: string | null;
  enabled: boolean | null;
  secret_sealed: string | null;
}

/** Claims up to `limit` due deliveries for one attempt each (shared/webhooks/outbox.ts), with what the POST needs. */
export function claimDueDeliveries(db: Queryable, c: Claim): Promise<ClaimedDelivery[]> {
  return claimDue<ClaimedDelivery>(
    db,
    'inbound',
    c,
    db`
      select claimed.id, claimed.tenant_id, claimed.attempts, r.recipient, m.raw, w.webhook_url, w.enabled, w.secret_sealed
      from claimed
      join inbound_recipients r on r.id = claimed.inbound_recipient_id
      left join inbound_messages m on m.id = r.message_id
      left join inbound_webhooks w on w.tenant_id = claimed.tenant_id`,
  );
}

export interface DeadDeliveryRow {
  id: string;
  inbound_message_id: string;
  recipient: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  created_at: Date;
  last_attempt_at: Date | null;
  dead_at: Date;
}

/** A tenant's dead letters, most recently dead first, after the keyset position (dead_at, id). */
export async function listDeadDeliveries(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after: { at: Date; id: string } | undefined },
): Promise<DeadDeliveryRow[]> {
  return db<DeadDeliveryRow[]>`
    select d.id, r.message_id as inbound_message_id, r.recipient, d.attempts, d.last_status, d.last_error,
           d.created_at, d.last_attempt_at, d.dead_at
    from inbound_webhook_deliveries d
    join inbound_recipients r on r.id = d.inbound_recipient_id
    where d.tenant_id = ${tenantId} and d.status = 'dead'
      ${page.after ? db`and (d.dead_at, d.id) < (${page.after.at}, ${page.after.id})` : db``}
    order by d.dead_at desc, d.id desc
    limit ${page.limit}`;
}

export async function countDeadDeliveries(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from inbound_webhook_deliveries where tenant_id = ${tenantId} and status = 'dead'`;
  return row!.n;
}

/** Back to pending, due at once (shared/webhooks/outbox.ts); undefined unless it is a dead delivery of that tenant. */
export const reviveDeadDelivery = (db: Queryable, tenantId: string, id: string, at: Date): Promise<{ id: string } | undefined> =>
  reviveDead<{ id: string }>(db, 'inbound', tenantId, id, at);
