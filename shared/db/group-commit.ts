// Group commit: concurrent writers share one transaction; each is answered only after the transaction holding its item commits.
import type { Logger } from '../kernel/log.js';

/** Batches of reads in flight at once (they take no row locks), so a slow batch does not hold the next askers. */
export const READS_IN_FLIGHT = 4;

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(err: unknown): void;
}

/**
 * A commit costs round trips and a WAL flush whatever it holds, so N items in one transaction
 * cost far less than N transactions. Items queue while a commit runs and the next commit takes
 * them all: a lone writer waits for one commit, a busy server batches by itself. When a batch
 * fails (a batch of writes or of look-ups), its items run again one at a time, so one bad item fails alone. With
 * `concurrency` above 1, that many batches may be in flight at once (each on its own connection): the commit must then
 * take its row locks in one order and retry deadlocks, as two processes' batches would need anyway.
 */
export class GroupCommit<T, R> {
  private queue: Waiting<T, R>[] = [];
  private running = 0;

  constructor(
    /**
     * Commits the items in one transaction and returns one result per item, in order. `retry` is
     * set when an item is committed alone after its batch failed: the batch's COMMIT may have
     * succeeded with its reply lost, so the item may already be stored.
     */
    private readonly commit: (items: T[], retry: boolean) => Promise<R[]>,
    private readonly log: Logger,
    private readonly what: string,
    private readonly maxBatch = 200,
    private readonly concurrency = 1,
  ) {}

  /** Resolves once the item is committed. */
  write(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.running < this.concurrency) {
        this.running++;
        // One turn of the event loop lets the writers that are ready now join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.commit(
            batch.map((w) => w.item),
            false,
          );
          batch.forEach((w, i) => w.resolve(results[i]!));
        } catch (err) {
          if (batch.length === 1) {
            batch[0]!.reject(err);
            continue;
          }
          this.log.warn({ err, size: batch.length }, `a batch of ${this.what} failed; running them one by one`);
          for (const w of batch) {
            await this.commit([w.item], true).then(
              (results) => w.resolve(results[0]!),
              (itemErr: unknown) => w.reject(itemErr),
            );
          }
        }
      }
    } finally {
      this.running--;
    }
  }
}
