// Transactions in two round trips: BEGIN goes out with the reads, COMMIT with the writes, on one reserved connection.
import type postgres from 'postgres';
import type { Sql } from './connection.js';

/**
 * A transaction whose statements are pipelined: postgres.js writes every query issued on a reserved connection
 * without waiting for the replies before it, and the server runs them in the order sent. sql.begin would cost a
 * round trip for BEGIN and another for COMMIT on top of the work.
 */
export interface Pipeline {
  /** The transaction's connection: statements issued without awaiting go out together, in the order issued. */
  tx: postgres.ReservedSql;
  /**
   * Sends COMMIT right behind the statements already issued (`writes`, issued in lock order; each must issue its
   * statement without awaiting anything else first) and waits for all of them. When one fails the server aborts the transaction and takes the COMMIT as a
   * ROLLBACK, so nothing is kept; the first failure is thrown.
   */
  commit(writes: readonly Promise<unknown>[]): Promise<void>;
}

export interface PipelineOptions {
  /**
   * Plan each statement once per connection (plan_cache_mode force_generic_plan, for this transaction only). For a
   * hot transaction whose statements take arrays of ids: PostgreSQL otherwise keeps making a custom plan for each
   * call, since a generic plan's estimate for `= any($1)` never looks cheaper, and planning those statements cost
   * more than running them (0.2 ms against 0.05 ms each in the tracking recorder).
   */
  genericPlans?: boolean;
}

/** Runs `body` in a pipelined transaction; commits after it if it did not; rolls back when it throws before. */
export async function pipelinedTransaction<R>(sql: Sql, body: (p: Pipeline) => Promise<R>, options: PipelineOptions = {}): Promise<R> {
  const tx = await sql.reserve();
  let open = true;
  // postgres.js sends a query once it is awaited or executed: BEGIN now, ahead of whatever body issues.
  const begin = options.genericPlans ? Promise.all([tx`begin`.execute(), tx`set local plan_cache_mode = force_generic_plan`.execute()]) : tx`begin`.execute();
  // Its failure is thrown by the statements behind it (and by settled()); this keeps it from being unhandled meanwhile.
  begin.catch(() => undefined);
  try {
    const result = await body({
      tx,
      commit: async (writes) => {
        // postgres.js hands a query to the connection a microtask or two after it is awaited (more when a query
        // function awaits it inside): a COMMIT executed right now would overtake writes issued just before it and
        // leave them to run after the transaction, one autocommit each. A turn of the event loop lets every
        // microtask run first, so the writes are on the wire, in order, before the COMMIT.
        await new Promise((resolve) => setImmediate(resolve));
        const commit = tx`commit`.execute();
        open = false;
        await settled([begin, ...writes, commit]);
      },
    });
    if (open) {
      open = false;
      await settled([begin, tx`commit`.execute()]);
    }
    return result;
  } catch (err) {
    if (open) await tx`rollback`.catch(() => undefined);
    throw err;
  } finally {
    tx.release();
  }
}

/** Waits for every statement (none left unhandled), then throws the first failure in sending order. */
async function settled(statements: readonly Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(statements);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
