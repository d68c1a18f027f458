// Deadlines for tenant-shaped queries: each runs in a transaction of its own with a statement_timeout (SET LOCAL), holding one of its tenant's slots and one of the process's, and a query cancelled at its deadline answers a clear error instead of a late 200.
import type { QueriesConfig, QueryKind } from '../config/queries.js';
import { AppError } from '../errors.js';
import type { Queryable, Sql } from './connection.js';
import { KeyedSlots, Slots } from './query-slots.js';

/** The kinds a request runs (materialisation is a worker's, with its own deadline and no tenant slot). */
export type HeavyKind = Exclude<QueryKind, 'segment_materialize'>;

/** PostgreSQL's query_canceled: statement_timeout (or a cancel request) stopped the statement. */
export function isQueryCanceled(err: unknown): boolean {
  return (err as { code?: unknown } | undefined)?.code === '57014';
}

/**
 * Sets the transaction's statement_timeout (`set local`: it ends with the transaction, so a pooled connection
 * never keeps it). Every later statement of the transaction, each on its own, must finish within `ms`.
 */
export async function setDeadline(tx: Queryable, ms: number): Promise<void> {
  await tx`select set_config('statement_timeout', ${String(ms)}, true)`;
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

  constructor(
    private readonly sql: Sql,
    private readonly config: QueriesConfig,
  ) {
    this.tenants = new KeyedSlots(config.per_tenant);
    this.process = new Slots(config.global);
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
      release();
    }
  }

  /**
   * A streamed read (an export from a cursor): `open` makes the stream on a connection reserved for it, in a
   * transaction with the kind's deadline, and the slots are held until the stream ends or is abandoned. Refusals
   * (the caps) are thrown before the first item, so they still answer with their status; a deadline reached
   * mid-stream ends the stream with the error (the response is cut short).
   */
  async stream<T>(tenantId: string, kind: HeavyKind, open: (tx: Queryable) => AsyncIterable<T>): Promise<AsyncGenerator<T>> {
    const release = await this.admit(tenantId);
    let reserved;
    try {
      reserved = await this.sql.reserve();
      await reserved`begin`;
      await setDeadline(reserved, this.deadlineOf(kind));
    } catch (err) {
      if (reserved) {
        await reserved`rollback`.catch(() => undefined);
        reserved.release();
      }
      release();
      throw err;
    }
    return this.drain(reserved, kind, open(reserved), release);
  }

  private async *drain<T>(conn: Awaited<ReturnType<Sql['reserve']>>, kind: HeavyKind, items: AsyncIterable<T>, release: () => void): AsyncGenerator<T> {
    let committed = false;
    try {
      for await (const item of items) yield item;
      await conn`commit`;
      committed = true;
    } catch (err) {
      if (isQueryCanceled(err)) throw pastDeadline(kind, this.deadlineOf(kind), this.config.retry_after_seconds);
      throw err;
    } finally {
      // Also when the consumer stops early (the client went away): nothing of a read is kept either way.
      if (!committed) await conn`rollback`.catch(() => undefined);
      conn.release();
      release();
    }
  }

  /** Takes a slot of the tenant, then one of the process; the returned function gives both back. */
  private async admit(tenantId: string): Promise<() => void> {
    const { queue_wait_ms: wait, retry_after_seconds: retryAfter, per_tenant: perTenant } = this.config;
    const retry = { headers: { 'Retry-After': String(retryAfter) } };
    if (!(await this.tenants.take(tenantId, wait))) {
      throw new AppError('rate_limited', `this account already runs ${perTenant} heavy queries (segment counts, searches, analytics, exports) at once: retry after ${retryAfter} s`, retry);
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
