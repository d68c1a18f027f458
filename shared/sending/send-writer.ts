// Commits accepted sends by group commit: one transaction (multi-row inserts of sends, events and delivery jobs) for all the acceptances ready at once.
import type { Queryable, Sql } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import { insertEvents, type NewEvent } from '../events/queries.js';
import type { Logger } from '../log.js';
import type { Boss } from '../jobs/boss.js';
import { findSends, insertSends, type NewSend, type SendRow } from '../sends/queries.js';
import { enqueueDeliveries } from './delivery-jobs.js';

export interface PendingSend {
  send: NewSend;
  events: NewEvent[];
  /** The delivery job, when the send is to be delivered (now, or at `startAfter`). */
  delivery?: { startAfter: Date | null } | undefined;
  /** Work that must commit with this send (e.g. its Idempotency-Key answer). */
  inTransaction?: ((tx: Queryable, row: SendRow) => Promise<void>) | undefined;
}

/** An item is one message's sends (one per recipient): they commit together or not at all. */
export type SendWriter = GroupCommit<PendingSend[], SendRow[]>;

export function createSendWriter(sql: Sql, boss: Boss, log: Logger): SendWriter {
  return new GroupCommit<PendingSend[], SendRow[]>(
    (messages, retry) =>
      sql.begin(async (tx) => {
        // A message retried alone may be stored already (its batch committed, the reply was lost):
        // then it is answered from the stored rows and nothing is written twice.
        if (retry) {
          const stored = await findSends(tx, messages.flat().map((i) => i.send.id));
          if (stored.length > 0) {
            const byId = new Map(stored.map((r) => [r.id, r]));
            return messages.map((message) => message.map((i) => byId.get(i.send.id)!));
          }
        }
        const items = messages.flat();
        const inserted = new Map((await insertSends(tx, items.map((i) => i.send))).map((r) => [r.id, r]));
        await insertEvents(tx, items.flatMap((i) => i.events));
        const deliveries = items.flatMap((i) => (i.delivery ? [{ job: { send_id: i.send.id }, startAfter: i.delivery.startAfter }] : []));
        await enqueueDeliveries(boss, tx, deliveries);
        for (const item of items) if (item.inTransaction) await item.inTransaction(tx, inserted.get(item.send.id)!);
        return messages.map((message) => message.map((i) => inserted.get(i.send.id)!));
      }),
    log,
    'accepted sends',
  );
}
