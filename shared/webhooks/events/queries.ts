// SQL for event webhooks: endpoints (event_webhooks), the outbox of deliveries (enqueue, claim, outcome), the delivery log, dead letters and replay.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/connection.js';
import { claimDue, reviveDead, type Claim, type DeliveryStatus } from '../outbox.js';
import type { OutboxEvent, WebhookEventType } from './event-types.js';

export interface EndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  secret_rotated_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewEndpoint {
  id: string;
  tenant_id: string;
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  secret_sealed: string;
  at: Date;
}

export async function insertEndpoint(db: Queryable, e: NewEndpoint): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    insert into event_webhooks (id, tenant_id, url, description, event_types, enabled, secret_sealed, created_at, updated_at)
    values (${e.id}, ${e.tenant_id}, ${e.url}, ${e.description}, ${e.event_types}, ${e.enabled}, ${e.secret_sealed}, ${e.at}, ${e.at})
    returning *`;
  return row!;
}

export async function countEndpoints(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from event_webhooks where tenant_id = ${tenantId}`;
  return row!.n;
}

/** The tenant's endpoint, or undefined: another tenant's id reads as absent. */
export async function findEndpoint(db: Queryable, tenantId: string, id: string, forUpdate = false): Promise<EndpointRow | undefined> {
  const [row] = await db<EndpointRow[]>`
    select * from event_webhooks where id = ${id} and tenant_id = ${tenantId} ${forUpdate ? db`for update` : db``}`;
  return row;
}

export async function listEndpoints(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after: { at: Date; id: string } | undefined },
): Promise<EndpointRow[]> {
  return db<EndpointRow[]>`
    select * from event_webhooks where tenant_id = ${tenantId}
      ${page.after ? db`and (created_at, id) < (${page.after.at}, ${page.after.id})` : db``}
    order by created_at desc, id desc limit ${page.limit}`;
}

export interface EndpointChange {
  url: string;
  description: string | null;
  event_types: WebhookEventType[];
  enabled: boolean;
  at: Date;
}

export async function updateEndpoint(db: Queryable, tenantId: string, id: string, c: EndpointChange): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    update event_webhooks set url = ${c.url}, description = ${c.description}, event_types = ${c.event_types}, enabled = ${c.enabled}, updated_at = ${c.at}
    where id = ${id} and tenant_id = ${tenantId} returning *`;
  return row!;
}

/** The new secret signs from now on; the old one keeps signing too until `previousExpiresAt`. */
export async function rotateEndpointSecret(
  db: Queryable,
  tenantId: string,
  id: string,
  r: { secretSealed: string; previousSealed: string; previousExpiresAt: Date; at: Date },
): Promise<EndpointRow> {
  const [row] = await db<EndpointRow[]>`
    update event_webhooks
    set secret_sealed = ${r.secretSealed}, previous_secret_sealed = ${r.previousSealed}, previous_secret_expires_at = ${r.previousExpiresAt},
        secret_rotated_at = ${r.at}, updated_at = ${r.at}
    where id = ${id} and tenant_id = ${tenantId} returning *`;
  return row!;
}

export async function deleteEndpoint(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from event_webhooks where id = ${id} and tenant_id = ${tenantId}`;
  return rows.count > 0;
}

/** The event types the enabled endpoints of these tenants subscribe to, by tenant (tenants without one are absent). */
export async function subscribedTypes(db: Queryable, tenantIds: readonly string[]): Promise<Map<string, Set<string>>> {
  const rows = await db<{ tenant_id: string; types: string[] }[]>`
    select tenant_id, array_agg(distinct t) as types
    from event_webhooks, unnest(event_types) as t
    where tenant_id = any(${[...tenantIds]}::uuid[]) and enabled
    group by tenant_id`;
  return new Map(rows.map((r) => [r.tenant_id, new Set(r.types)]));
}

/** subscribedTypes for the tenants these sends belong to (what a hit batch, which knows only its sends, needs). */
export async function subscribedTypesOfSends(db: Queryable, sendIds: readonly string[]): Promise<Map<string, Set<string>>> {
  if (sendIds.length === 0) return new Map();
  const rows = await db<{ tenant_id: string; types: string[] }[]>`
    select tenant_id, array_agg(distinct t) as types
    from event_webhooks, unnest(event_types) as t
    where tenant_id in (select tenant_id from sends where id = any(${sendIds}::uuid[])) and enabled
    group by tenant_id`;
  return new Map(rows.map((r) => [r.tenant_id, new Set(r.types)]));
}

/**
 * The outbox write: one pending delivery per (enabled endpoint of the event's tenant subscribed to
 * its type, event), in one statement on the caller's handle (its transaction). An event already
 * queued for an endpoint is not queued again.
 */
export async function insertOutboxRows(db: Queryable, events: readonly OutboxEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({ id: e.id, tenant_id: e.tenant_id, type: e.type, payload: e.payload, at: e.at.toISOString() }));
  await db`
    insert into event_webhook_deliveries (id, tenant_id, webhook_id, event_id, event_type, payload, status, attempts, next_attempt_at, created_at)
    select uuid_v7(), e.tenant_id, w.id, e.id, e.type, e.payload, 'pending', 0, e.at, e.at
    from jsonb_to_recordset(${db.json(rows as never)}) as e(id uuid, tenant_id uuid, type text, payload jsonb, at timestamptz)
    join event_webhooks w on w.tenant_id = e.tenant_id and w.enabled and e.type = any(w.event_types)
    on conflict (webhook_id, event_id) do nothing`;
}

export interface DeliveryRow {
  id: string;
  tenant_id: string;
  webhook_id: string;
  event_id: string;
  event_type: WebhookEventType;
  payload: Record<string, unknown>;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_status: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  created_at: Date;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  dead_at: Date | null;
}

/** A claimed delivery with what its POST needs from the endpoint. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  enabled: boolean;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
}

/** Claims up to `limit` due deliveries for one attempt each (shared/webhooks/outbox.ts), with their endpoint's URL and secrets. */
export function claimDueDeliveries(db: Queryable, c: Claim): Promise<ClaimedDelivery[]> {
  return claimDue<ClaimedDelivery>(
    db,
    'event',
    c,
    db`
      select claimed.*, w.url, w.enabled, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at
      from claimed join event_webhooks w on w.id = claimed.webhook_id`,
  );
}

/** One endpoint's deliveries, newest first (keyset on created_at, id), optionally of one status. */
export async function listDeliveries(
  db: Queryable,
  tenantId: string,
  f: { webhookId?: string; status?: DeliveryStatus; limit: number; after: { at: Date; id: string } | undefined },
): Promise<DeliveryRow[]> {
  return db<DeliveryRow[]>`
    select * from event_webhook_deliveries
    where tenant_id = ${tenantId}
      ${f.webhookId ? db`and webhook_id = ${f.webhookId}` : db``}
      ${f.status ? db`and status = ${f.status}` : db``}
      ${f.after ? db`and (created_at, id) < (${f.after.at}, ${f.after.id})` : db``}
    order by created_at desc, id desc limit ${f.limit}`;
}

export async function countDeliveries(db: Queryable, tenantId: string, f: { webhookId?: string; status?: DeliveryStatus }): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from event_webhook_deliveries
    where tenant_id = ${tenantId}
      ${f.webhookId ? db`and webhook_id = ${f.webhookId}` : db``}
      ${f.status ? db`and status = ${f.status}` : db``}`;
  return row!.n;
}

/** The tenant's dead letters, most recently dead first (keyset on dead_at, id). */
export async function listDeadDeliveries(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after: { at: Date; id: string } | undefined },
): Promise<DeliveryRow[]> {
  return db<DeliveryRow[]>`
    select * from event_webhook_deliveries
    where tenant_id = ${tenantId} and status = 'dead'
      ${page.after ? db`and (dead_at, id) < (${page.after.at}, ${page.after.id})` : db``}
    order by dead_at desc, id desc limit ${page.limit}`;
}

/** Back to pending, due at once (shared/webhooks/outbox.ts); undefined unless it is a dead delivery of that tenant. */
export const reviveDeadDelivery = (db: Queryable, tenantId: string, id: string, at: Date): Promise<DeliveryRow | undefined> =>
  reviveDead<DeliveryRow>(db, 'event', tenantId, id, at);

export const newEndpointId = (): string => randomUUID();
