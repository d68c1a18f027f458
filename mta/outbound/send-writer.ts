// Group commit for accepted sends: concurrent acceptances share one transaction (multi-row inserts of sends, events and delivery jobs), each answered only after it commits.
import type { Queryable, Sql } from '../../shared/db/connection.js';
import { insertEvents, type NewEvent } from '../../shared/events/queries.js';
import type { Logger } from '../../shared/log.js';
import type { Boss } from '../../shared/queue.js';
import { insertSends, type NewSend, type SendRow } from '../../shared/sends/queries.js';
import { enqueueDeliveries } from './queue.js';

export interface PendingSend {
  send: NewSend;
  events: NewEvent[];
  /** The delivery job, when the send is to be delivered (now, or at `startAfter`). */
  delivery?: { startAfter: Date | null } | undefined;
  /** Work that must commit with this send (e.g. its Idempotency-Key answer). */
  inTransaction?: ((tx: Queryable, row: SendRow) => Promise<void>) | undefined;
}

interface Waiting {
  item: PendingSend;
  resolve(row: SendRow): void;
  reject(err: unknown): void;
}

/**
 * A commit costs a few round trips and a WAL flush whatever it holds, so writing N sends in one
 * transaction is close to N times cheaper than N transactions. Items queue while a flush runs and
 * the next flush takes them all: a lone request waits for one commit, a busy server batches by
 * itself. If a batch fails, its items are retried one transaction each, so one bad item (a
 * failing hook) fails alone.
 */
export class SendWriter {
  private queue: Waiting[] = [];
  private flushing = false;

  constructor(
    private readonly sql: Sql,
    private readonly boss: Boss,
    private readonly log: Logger,
    private readonly maxBatch = 200,
  ) {}

  /** Resolves with the stored row once the send, its events and its job are committed. */
  write(item: PendingSend): Promise<SendRow> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (!this.flushing) {
        this.flushing = true;
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const rows = await this.commit(batch.map((w) => w.item));
          batch.forEach((w, i) => w.resolve(rows[i]!));
        } catch (err) {
          if (batch.length === 1) {
            batch[0]!.reject(err);
            continue;
          }
          this.log.warn({ err, size: batch.length }, 'a batch of sends failed to commit; committing them one by one');
          for (const w of batch) {
            await this.commit([w.item]).then(
              (rows) => w.resolve(rows[0]!),
              (itemErr: unknown) => w.reject(itemErr),
            );
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  private commit(items: PendingSend[]): Promise<SendRow[]> {
    return this.sql.begin(async (tx) => {
      const inserted = new Map((await insertSends(tx, items.map((i) => i.send))).map((r) => [r.id, r]));
      const rows = items.map((i) => inserted.get(i.send.id)!);
      await insertEvents(tx, items.flatMap((i) => i.events));
      const deliveries = items.flatMap((i) => (i.delivery ? [{ job: { send_id: i.send.id }, startAfter: i.delivery.startAfter }] : []));
      await enqueueDeliveries(this.boss, tx, deliveries);
      for (const [n, item] of items.entries()) if (item.inTransaction) await item.inTransaction(tx, rows[n]!);
      return rows;
    });
  }
}
