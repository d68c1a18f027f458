// Commits accepted sends by group commit: one transaction (multi-row inserts of sends, events and delivery-queue rows) for all the acceptances ready at
// once; the sends this process's delivery workers have room for are handed to them after the commit.
import type { Clock } from '../kernel/clock.js';
import type { Queryable, Sql } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import { insertEvents, type NewEvent } from '../engagement/events/queries.js';
import type { Logger } from '../kernel/log.js';
import type { DeliverySend } from './outbound-log/delivery-queries.js';
import { enqueueDeliveries, type QueuedDelivery } from './outbound-log/delivery-queue.js';
import { findSends, insertSends, type NewSend, type StoredSend } from './outbound-log/queries.js';
import type { HandedOver, LocalDelivery } from './local-delivery.js';

export interface PendingSend {
  send: NewSend;
  events: NewEvent[];
  /**
   * The send is to be delivered (now, or at `startAfter`); `tenant` is the tenant as the gates saw it, what a worker
   * handed the send at once decides on (a worker reading it from the queue reads the tenant again).
   */
  delivery?: { startAfter: Date | null; tenant: { status: 'active' | 'suspended'; is_sandbox: boolean } } | undefined;
  /** Work that must commit with this send (e.g. its Idempotency-Key answer). */
  inTransaction?: ((tx: Queryable, row: StoredSend) => Promise<void>) | undefined;
}

/** An item is one message's sends (one per recipient): they commit together or not at all. */
export type SendWriter = GroupCommit<PendingSend[], StoredSend[]>;

export interface SendWriterDeps {
  sql: Sql;
  log: Logger;
  clock: Clock;
  /** This process's delivery workers, when it runs the outbound role. */
  local: LocalDelivery;
  /** How long a send handed to this process's workers stays theirs (delivery.workers.job_expire_seconds). */
  leaseSeconds: number;
}

/** A send a worker can take at once: due now, with bytes to deliver. */
const deliverableNow = (item: PendingSend): boolean => item.delivery !== undefined && item.delivery.startAfter === null && item.send.message !== null;

function handedOver(item: PendingSend, row: StoredSend): HandedOver {
  const s = item.send;
  const send: DeliverySend = {
    id: s.id,
    tenant_id: s.tenant_id,
    domain_id: s.domain_id,
    mode: s.mode,
    status: row.status,
    to_email: s.to_email,
    envelope_from: s.envelope_from,
    message_id: s.message_id,
    defer_until: null,
    created_at: s.created_at,
    updated_at: s.created_at,
    tenant_status: item.delivery!.tenant.status,
    tenant_is_sandbox: item.delivery!.tenant.is_sandbox,
    attempts: 0,
    first_attempt_at: null,
    campaign_id: s.campaign_id,
    contact_id: s.contact_id,
  };
  return { send, message: s.message! };
}

export function createSendWriter(deps: SendWriterDeps): SendWriter {
  const { sql, log, local } = deps;
  return new GroupCommit<PendingSend[], StoredSend[]>(
    async (messages, retry) => {
      const items = messages.flat();
      // The first `reserved` sends deliverable now go to this process's workers, claimed in the same transaction.
      const reserved = retry ? 0 : local.reserve(items.filter(deliverableNow).length);
      const handed: PendingSend[] = [];
      let stored: StoredSend[][];
      try {
        stored = await sql.begin(async (tx) => {
          // A message retried alone may be stored already (its batch committed, the reply was lost):
          // then it is answered from the stored rows and nothing is written twice.
          if (retry) {
            const found = await findSends(
              tx,
              items.map((i) => i.send.id),
            );
            if (found.length > 0) {
              const byId = new Map(found.map((r) => [r.id, r]));
              return messages.map((message) => message.map((i) => byId.get(i.send.id)!));
            }
          }
          const inserted = new Map(
            (
              await insertSends(
                tx,
                items.map((i) => i.send),
              )
            ).map((r) => [r.id, r]),
          );
          await insertEvents(
            tx,
            items.flatMap((i) => i.events),
          );
          const queued: QueuedDelivery[] = [];
          for (const item of items) {
            if (!item.delivery) continue;
            const { startAfter } = item.delivery;
            if (handed.length < reserved && deliverableNow(item)) {
              handed.push(item);
              const claimedAt = item.send.created_at;
              queued.push({ sendId: item.send.id, claimedAt, dueAt: new Date(claimedAt.getTime() + deps.leaseSeconds * 1000) });
            } else {
              queued.push({ sendId: item.send.id, dueAt: startAfter ?? item.send.created_at });
            }
          }
          await enqueueDeliveries(tx, queued);
          for (const item of items) if (item.inTransaction) await item.inTransaction(tx, inserted.get(item.send.id)!);
          return messages.map((message) => message.map((i) => inserted.get(i.send.id)!));
        });
      } catch (err) {
        local.settle(reserved, []);
        throw err;
      }
      const rows = new Map(stored.flat().map((r) => [r.id, r]));
      local.settle(
        reserved,
        handed.map((item) => handedOver(item, rows.get(item.send.id)!)),
      );
      return stored;
    },
    log,
    'accepted sends',
  );
}
