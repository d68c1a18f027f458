// Deadlines for tenant-shaped queries: each runs in a transaction of its own with a statement_timeout (SET LOCAL), holding one of its tenant's slots and one
// of the process's, and a query cancelled at its deadline answers a clear error instead of a late 200.
import type { QueriesConfig, QueryKind } from '../config/queries.js';
import { AppError } from '../kernel/errors.js';
import type { Queryable, Sql } from './connection.js';
import { KeyedSlots, Slots, TimeBudget } from './query-slots.js';

type Reserved = Awaited<ReturnType<Sql['reserve']>>;

/** The kinds a request runs (materialisation is a worker's, with its own deadline and no tenant slot). */
export type HeavyKind = Exclude<QueryKind, 'segment_materialize'>;

/** PostgreSQL's query_canceled: statement_timeout (or a cancel request) stopped the statement. */
export function isQueryCanceled(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === '57014';
}

/**
 * Sets the transaction's statement_timeout (`set local`: it ends with the transaction, so a pooled connection
 * never keeps it). Every later statement of the transaction, each on its own, must finish within `ms`. The
 * statements also run without parallel workers: a tenant's scan then takes one core of the database server,
 * not three, and the other tenants' queries keep the rest.
 */
export async function setDeadline(tx: Queryable, ms: number): Promise<void> {
  await tx`select set_config('statement_timeout', ${String(ms)}, true), set_config('max_parallel_workers_per_gather', '0', true)`;
}

/** A deadline as a tenant reads it: 200 ms, 5 s. */
export const formatDeadline = (ms: number) => (ms < 1000 ? `${ms} ms` : `${ms / 1000} s`);

/** The segment kinds' answer past the deadline: the rule set itself is the problem, so it is a 422 naming it. */
export function segmentTooExpensive(ms: number): AppError {
  return new AppError(
    'validation_error',
    `definition: this rule set is too expensive to evaluate: counting its contacts ran past the ${formatDeadline(ms)} deadline and was stopped; ` +
      'use fewer or narrower rules (an exact value or starts_with rather than contains, a shorter engagement window)',
  );
}

function pastDeadline(kind: HeavyKind, ms: number, retryAfter: number): AppError {
  if (kind === 'segment') return segmentTooExpensive(ms);
  const what = kind === 'contact_search' ? 'contact search' : kind === 'analytics' ? 'analytics read' : 'export';
  return new AppError('service_unavailable', `this ${what} ran past its ${formatDeadline(ms)} deadline and was stopped; try again later or narrow it`, {
    headers: { 'Retry-After': String(retryAfter) },
  });
}

/** Runs tenant-shaped queries each within its kind's deadline and the per-tenant and per-process caps (config/queries.yaml). */
export class TenantQueries {
  private readonly tenants: KeyedSlots;
  private readonly process: Slots;
  private readonly time: TimeBudget;

  constructor(
    private readonly sql: Sql,
    private readonly config: QueriesConfig,
    now: () => number = () => performance.now(),
  ) {
    this.tenants = new KeyedSlots(config.per_tenant);
    this.process = new Slots(config.global);
    this.time = new TimeBudget(config.per_tenant_ms_per_minute, 60_000, now);
  }

  deadlineOf(kind: QueryKind): number {
    return this.config.deadlines_ms[kind];
  }

  /**
   * Runs `fn` in a transaction of its own whose statements each have the kind's deadline, once the tenant and the
   * process have a slot free (each waited for up to queue_wait_ms): 429 rate_limited at the tenant's cap, 503 at the
   * process's, and past the deadline 422 (segments) or 503 with Retry-After. A cancelled statement aborts the
   * transaction; postgres.js rolls it back and returns the connection to the pool.
   */
  async run<T>(tenantId: string, kind: HeavyKind, fn: (tx: Queryable) => Promise<T>): Promise<T> {
    const release = await this.admit(tenantId);
    const spend = this.time.meter(tenantId);
    try {
      const ms = this.deadlineOf(kind);
      return (await this.sql.begin(async (tx) => {
        await setDeadline(tx, ms);
        return fn(tx);
      })) as T;
    } catch (err) {
      if (isQueryCanceled(err)) throw pastDeadline(kind, this.deadlineOf(kind), this.config.retry_after_seconds);
      throw err;
    } finally {
      spend();
      release();
    }
  }

  /**
   * A streamed read (an export from a cursor): `open` makes the items on a connection reserved for them, in a
   * transaction with the kind's deadline, and the slots are held until the items end or are abandoned (return()).
   * The first `prefetch` items (a CSV's header and first page: where the query does its work) are read before this
   * resolves, so the caps, a deadline or any failure up to there still answer with their own status; a deadline
   * reached later ends the items with the error (the download is cut short).
   */
  async stream<T>(
    tenantId: string,
    kind: HeavyKind,
    open: (tx: Queryable) => AsyncIterable<T>,
    options: { prefetch?: number } = {},
  ): Promise<AsyncIterableIterator<T>> {
    const release = await this.admit(tenantId);
    // The time up to the first items counts against the tenant's budget: that is where the query does its work (a
    // slow download afterwards costs the server little).
    const spend = this.time.meter(tenantId);
    let conn: Reserved | undefined;
    let items: AsyncIterator<T> | undefined;
    let finished = false;
    // Gives everything back once: the cursor closed, the transaction ended, the connection and the slots released.
    const finish = async (commit: boolean) => {
      if (finished) return;
      finished = true;
      try {
        if (commit) {
          await conn!`commit`;
        } else {
          await Promise.resolve(items?.return?.()).catch(() => undefined);
          if (conn) await conn`rollback`.catch(() => undefined);
        }
      } finally {
        conn?.release();
        release();
      }
    };
    const mapped = (err: unknown) => (isQueryCanceled(err) ? pastDeadline(kind, this.deadlineOf(kind), this.config.retry_after_seconds) : err);
    const ahead: IteratorResult<T>[] = [];
    try {
      conn = await this.sql.reserve();
      await conn`begin`;
      await setDeadline(conn, this.deadlineOf(kind));
      items = open(conn)[Symbol.asyncIterator]();
      while (ahead.length < (options.prefetch ?? 0) && !ahead.at(-1)?.done) ahead.push(await items.next());
    } catch (err) {
      await finish(false);
      throw mapped(err);
    } finally {
      spend();
    }
    const source = items;
    const iterator: AsyncIterableIterator<T> = {
      [Symbol.asyncIterator]: () => iterator,
      async next() {
        try {
          const next = ahead.shift() ?? (finished ? { done: true, value: undefined } : await source.next());
          if (next.done) await finish(true);
          return next;
        } catch (err) {
          await finish(false);
          throw mapped(err);
        }
      },
      // Also when the consumer stops early (the client went away) or never starts: nothing of a read is kept.
      async return() {
        await finish(false);
        return { done: true, value: undefined };
      },
    };
    return iterator;
  }

  /**
   * Takes a slot of the tenant, then one of the process; the returned function gives both back. A tenant whose
   * heavy queries used up its time budget is refused first, for as long as the budget needs to refill.
   */
  private async admit(tenantId: string): Promise<() => void> {
    const { queue_wait_ms: wait, retry_after_seconds: retryAfter, per_tenant: perTenant, per_tenant_ms_per_minute: budget } = this.config;
    const refill = this.time.waitMs(tenantId);
    if (refill > 0) {
      const seconds = Math.ceil(refill / 1000);
      throw new AppError(
        'rate_limited',
        `this account's heavy queries (segment counts, searches, analytics, exports) used their ${formatDeadline(budget)} of query time per minute: ` +
          `retry after ${seconds} s`,
        { headers: { 'Retry-After': String(seconds) } },
      );
    }
    const retry = { headers: { 'Retry-After': String(retryAfter) } };
    if (!(await this.tenants.take(tenantId, wait))) {
      throw new AppError(
        'rate_limited',
        `this account already runs ${perTenant} heavy queries (segment counts, searches, analytics, exports) at once: retry after ${retryAfter} s`,
        retry,
      );
    }
    if (!(await this.process.take(wait))) {
      this.tenants.release(tenantId);
      throw new AppError('service_unavailable', `the service is running as many heavy queries as it can at once: retry after ${retryAfter} s`, retry);
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.process.release();
      this.tenants.release(tenantId);
    };
  }
}
