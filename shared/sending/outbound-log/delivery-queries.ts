// SQL of the delivery worker: a send as delivery sees it (one, or the batch a worker claimed from the queue), and the status it ends an attempt in.
import type { Queryable } from '../../db/connection.js';
import type { AttemptRow, SendStatus } from './queries.js';

/** A send with what delivery decides on; the message bytes come only with a claimed batch. */
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
  /** When the first attempt was made: the retry curve's age limit counts from it, not from acceptance (a warm-up deferral may last days). */
  first_attempt_at: Date | null;
  /** A campaign send's campaign and contact (null otherwise): carried on its delivery events. */
  campaign_id: string | null;
  contact_id: string | null;
}

/** The columns of a DeliverySend (sends s joined with tenants t). */
const deliveryColumns = (db: Queryable) => db`
  s.id, s.tenant_id, s.domain_id, s.mode, s.status, s.to_email, s.envelope_from, s.message_id, s.defer_until,
  s.created_at, s.updated_at, t.status as tenant_status, t.is_sandbox as tenant_is_sandbox, s.campaign_id, s.contact_id,
  (select count(*)::int from send_attempts a where a.send_id = s.id) as attempts,
  (select min(a.attempted_at) from send_attempts a where a.send_id = s.id) as first_attempt_at`;

/**
 * The sends a worker claimed from the delivery queue, with their messages, in one statement. `suppressed` says the
 * recipient is on the tenant's suppression list or an unsubscribed contact now (the send gate's rule,
 * suppressions/queries.ts suppressedAmong), so what changed since acceptance is seen without a look-up per send.
 */
export async function loadClaimedSends(db: Queryable, ids: readonly string[]): Promise<(DeliverySend & { message: Buffer | null; suppressed: boolean })[]> {
  if (ids.length === 0) return [];
  return db<(DeliverySend & { message: Buffer | null; suppressed: boolean })[]>`
    select ${deliveryColumns(db)}, s.message,
      exists (select 1 from suppressions x where x.tenant_id = s.tenant_id and x.email_hash = sha256(convert_to(s.to_email, 'UTF8')))
        or exists (select 1 from contacts c
                   where c.tenant_id = s.tenant_id and c.email_hash = sha256(convert_to(s.to_email, 'UTF8')) and c.status = 'unsubscribed')
        as suppressed
    from sends s join tenants t on t.id = s.tenant_id
    where s.id = any(${db.array([...ids])}::uuid[])`;
}

export interface StatusChange {
  status: Extract<SendStatus, 'delivered' | 'deferred' | 'bounced' | 'dropped' | 'failed' | 'simulated'>;
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

export interface Delivered {
  attempt: Omit<AttemptRow, 'id'>;
  /** The send's status_detail: who accepted it and what they said. */
  detail: string;
}

/** Marks many sends delivered with their attempts, in statements that each cover them all. */
export async function markDelivered(db: Queryable, delivered: Delivered[]): Promise<void> {
  if (delivered.length === 0) return;
  // Arrays, not a VALUES list: one statement text whatever the batch's size (prepared and planned once per connection).
  const column = (pick: (d: Delivered) => unknown) => db.array(delivered.map(pick) as string[]);
  const sendIds = column((d) => d.attempt.send_id);
  const attemptedAt = column((d) => d.attempt.attempted_at.toISOString());
  await db`
    insert into send_attempts (send_id, attempted_at, remote_host, outcome, smtp_code, enhanced_code, reply, duration_ms)
    select * from unnest(${sendIds}::uuid[], ${attemptedAt}::timestamptz[],
      ${column((d) => d.attempt.remote_host)}::text[], ${column((d) => d.attempt.outcome)}::text[], ${column((d) => d.attempt.smtp_code)}::int[],
      ${column((d) => d.attempt.enhanced_code)}::text[], ${column((d) => d.attempt.reply)}::text[], ${column((d) => d.attempt.duration_ms)}::int[])`;
  await db`
    update sends s set status = 'delivered', status_detail = v.detail, defer_until = null, updated_at = v.at
    from unnest(${sendIds}::uuid[], ${column((d) => d.detail)}::text[], ${attemptedAt}::timestamptz[]) as v(id, detail, at)
    where s.id = v.id`;
}

export async function deliveredAlready(db: Queryable, sendId: string): Promise<boolean> {
  const [row] = await db<{ status: string }[]>`select status from sends where id = ${sendId}`;
  return row?.status === 'delivered';
}
