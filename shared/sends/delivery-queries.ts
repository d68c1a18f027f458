// SQL of the delivery worker: a send as delivery sees it, claiming it for an attempt, and the status it ends the attempt in.
import type { Queryable } from '../db/connection.js';
import type { SendStatus } from './queries.js';

/** A send with what delivery decides on; the message bytes come only with the claim. */
export interface DeliverySend {
  id: string;
  tenant_id: string;
  domain_id: string | null;
  mode: 'live' | 'test';
  status: SendStatus;
  to_email: string;
  envelope_from: string;
  message_id: string;
  defer_until: Date | null;
  created_at: Date;
  updated_at: Date;
  tenant_status: 'active' | 'suspended';
  tenant_is_sandbox: boolean;
  /** Delivery attempts made so far (a warm-up deferral is not one). */
  attempts: number;
}

export async function loadDeliverySend(db: Queryable, id: string): Promise<DeliverySend | undefined> {
  const [row] = await db<DeliverySend[]>`
    select s.id, s.tenant_id, s.domain_id, s.mode, s.status, s.to_email, s.envelope_from, s.message_id, s.defer_until,
           s.created_at, s.updated_at, t.status as tenant_status, t.is_sandbox as tenant_is_sandbox,
           (select count(*)::int from send_attempts a where a.send_id = s.id) as attempts
    from sends s join tenants t on t.id = s.tenant_id
    where s.id = ${id}`;
  return row;
}

/**
 * Marks a queued or deferred send `sending` and returns its message. A send already `sending`
 * is taken over only when its mark is older than `staleBefore` (its worker died); a fresher one
 * belongs to a delivery still running, and undefined is returned.
 */
export async function claimForDelivery(db: Queryable, id: string, c: { at: Date; staleBefore: Date }): Promise<{ message: Buffer | null } | undefined> {
  const [row] = await db<{ message: Buffer | null }[]>`
    update sends set status = 'sending', updated_at = ${c.at}
    where id = ${id}
      and (status in ('queued', 'deferred') or (status = 'sending' and updated_at < ${c.staleBefore}))
    returning message`;
  return row;
}

export interface StatusChange {
  status: Extract<SendStatus, 'delivered' | 'deferred' | 'bounced' | 'dropped' | 'failed'>;
  at: Date;
  detail: string | null;
  /** Set for `deferred`, cleared otherwise. */
  deferUntil?: Date | null;
}

/** The send's status after an attempt or a wake-up decision. A dropped send keeps no message: it will never be delivered. */
export async function setDeliveryStatus(db: Queryable, id: string, c: StatusChange): Promise<void> {
  await db`
    update sends set
      status = ${c.status},
      status_detail = ${c.detail},
      defer_until = ${c.status === 'deferred' ? (c.deferUntil ?? null) : null},
      message = case when ${c.status === 'dropped'}::boolean then null else message end,
      updated_at = ${c.at}
    where id = ${id}`;
}
