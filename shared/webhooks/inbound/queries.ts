// SQL for inbound webhooks: a tenant's settings (inbound_webhooks), and its deliveries: what a job needs, the claim of an attempt, its outcome, the dead
// letters and replay.
import type { Queryable } from '../../db/connection.js';

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

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

/** A delivery with its recipient and the tenant's current settings (null when the tenant has none). */
export interface DeliveryForJob {
  id: string;
  tenant_id: string;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  recipient: string;
  inbound_message_id: string;
  webhook_url: string | null;
  enabled: boolean | null;
  secret_sealed: string | null;
}

export async function findDeliveryForJob(db: Queryable, id: string): Promise<DeliveryForJob | undefined> {
  const [row] = await db<DeliveryForJob[]>`
    select d.id, d.tenant_id, d.status, d.attempts, d.next_attempt_at, r.recipient, r.message_id as inbound_message_id,
           w.webhook_url, w.enabled, w.secret_sealed
    from inbound_webhook_deliveries d
    join inbound_recipients r on r.id = d.inbound_recipient_id
    left join inbound_webhooks w on w.tenant_id = d.tenant_id
    where d.id = ${id}`;
  return row;
}

/**
 * Claims the next attempt of a pending delivery: counts it and marks it in flight until `leaseUntil`
 * (next_attempt_at), so a second job for the same delivery finds it not due and leaves it alone.
 * Returns the attempt's number, or undefined when the delivery is finished or not due by `dueBy`.
 */
export async function claimAttempt(db: Queryable, id: string, c: { at: Date; dueBy: Date; leaseUntil: Date }): Promise<number | undefined> {
  const [row] = await db<{ attempts: number }[]>`
    update inbound_webhook_deliveries
    set attempts = attempts + 1, last_attempt_at = ${c.at}, next_attempt_at = ${c.leaseUntil}
    where id = ${id} and status = 'pending' and (next_attempt_at is null or next_attempt_at <= ${c.dueBy})
    returning attempts`;
  return row?.attempts;
}

export async function loadRawMessage(db: Queryable, messageId: string): Promise<Buffer | undefined> {
  const [row] = await db<{ raw: Buffer }[]>`select raw from inbound_messages where id = ${messageId}`;
  return row?.raw;
}

export interface AttemptOutcome {
  /** The receiver's HTTP status; null when it never answered. */
  lastStatus: number | null;
  lastError: string | null;
  at: Date;
}

/**
 * Each outcome writer only touches the attempt it belongs to (status pending, same attempt count):
 * a stale worker never overwrites a newer attempt's result. They return false when nothing matched.
 */
export async function markDelivered(db: Queryable, id: string, attempt: number, o: AttemptOutcome): Promise<boolean> {
  const rows = await db`
    update inbound_webhook_deliveries
    set status = 'delivered', last_status = ${o.lastStatus}, last_error = null, next_attempt_at = null, delivered_at = ${o.at}
    where id = ${id} and status = 'pending' and attempts = ${attempt}`;
  return rows.count > 0;
}

export async function markRetry(db: Queryable, id: string, attempt: number, o: AttemptOutcome & { nextAttemptAt: Date }): Promise<boolean> {
  const rows = await db`
    update inbound_webhook_deliveries
    set last_status = ${o.lastStatus}, last_error = ${o.lastError}, next_attempt_at = ${o.nextAttemptAt}
    where id = ${id} and status = 'pending' and attempts = ${attempt}`;
  return rows.count > 0;
}

/** Dead-letters the delivery. `attempt` is the attempt count seen: a delivery given up before its next attempt passes the count it has. */
export async function markDead(db: Queryable, id: string, attempt: number, o: AttemptOutcome): Promise<boolean> {
  const rows = await db`
    update inbound_webhook_deliveries
    set status = 'dead', last_status = ${o.lastStatus}, last_error = ${o.lastError}, next_attempt_at = null, dead_at = ${o.at}
    where id = ${id} and status = 'pending' and attempts = ${attempt}`;
  return rows.count > 0;
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

/**
 * Puts one dead delivery of the tenant back to pending with a fresh count of attempts, due at once.
 * The last status and error stay until the next attempt replaces them. Undefined when it is not
 * a dead delivery of that tenant.
 */
export async function reviveDeadDelivery(db: Queryable, tenantId: string, id: string, at: Date): Promise<{ id: string } | undefined> {
  const [row] = await db<{ id: string }[]>`
    update inbound_webhook_deliveries
    set status = 'pending', attempts = 0, next_attempt_at = ${at}, dead_at = null
    where id = ${id} and tenant_id = ${tenantId} and status = 'dead'
    returning id`;
  return row;
}
