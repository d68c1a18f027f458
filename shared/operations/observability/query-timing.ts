// Mailpath's own query timing: per-statement durations kept in memory per window (count, total, max, a reservoir sample), and the wrapper that measures the
// pool's statements.
import { createHash, randomUUID } from 'node:crypto';
import type { Sql } from '../../db/connection.js';

export interface TimingOptions {
  windowMinutes: number;
  maxStatementsPerWindow: number;
  samplesPerStatement: number;
}

export interface StatementTiming {
  statement: string;
  hash: string;
  calls: number;
  totalMs: number;
  maxMs: number;
  samples: number[];
}

/** The row past max_statements_per_window: one window never holds more statements than that. */
export const OTHER_STATEMENTS = '(other statements)';
const MAX_STATEMENT_CHARS = 2000;

/** Statement text as shown and grouped: whitespace collapsed, capped. */
export function normalizeStatement(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_STATEMENT_CHARS ? `${flat.slice(0, MAX_STATEMENT_CHARS)}…` : flat;
}

/** Durations per statement and window, for this process. Recording is a map look-up and a few additions. */
export class QueryTimings {
  /** Names this process's rows, so each process replaces only its own. */
  readonly processId = randomUUID();
  private readonly windows = new Map<number, Map<string, StatementTiming>>();
  private readonly hashes = new Map<string, string>();

  constructor(
    private readonly options: TimingOptions,
    private readonly now: () => number = Date.now,
  ) {}

  windowStartOf(at: number): number {
    const size = this.options.windowMinutes * 60_000;
    return Math.floor(at / size) * size;
  }

  record(text: string, durationMs: number): void {
    const start = this.windowStartOf(this.now());
    let window = this.windows.get(start);
    if (!window) this.windows.set(start, (window = new Map()));
    let statement = normalizeStatement(text);
    let timing = window.get(statement);
    if (!timing && window.size >= this.options.maxStatementsPerWindow) {
      statement = OTHER_STATEMENTS;
      timing = window.get(statement);
    }
    if (!timing) {
      let hash = this.hashes.get(statement);
      if (!hash) {
        hash = createHash('sha256').update(statement).digest('hex').slice(0, 32);
        if (this.hashes.size > 10 * this.options.maxStatementsPerWindow) this.hashes.clear();
        this.hashes.set(statement, hash);
      }
      timing = { statement, hash, calls: 0, totalMs: 0, maxMs: 0, samples: [] };
      window.set(statement, timing);
    }
    timing.calls++;
    timing.totalMs += durationMs;
    if (durationMs > timing.maxMs) timing.maxMs = durationMs;
    // Reservoir sampling: every call has the same chance to be in the sample, however many there are.
    const cap = this.options.samplesPerStatement;
    if (timing.samples.length < cap) timing.samples.push(durationMs);
    else {
      const slot = Math.floor(Math.random() * timing.calls);
      if (slot < cap) timing.samples[slot] = durationMs;
    }
  }

  /**
   * The windows to write: every one held. Closed windows are forgotten once taken (their rows are final);
   * the open one stays, and its row is replaced by the next flush with its then larger counts.
   */
  take(): { windowStart: Date; timings: StatementTiming[] }[] {
    const open = this.windowStartOf(this.now());
    const out: { windowStart: Date; timings: StatementTiming[] }[] = [];
    for (const [start, window] of this.windows) {
      out.push({ windowStart: new Date(start), timings: [...window.values()].map((t) => ({ ...t, samples: [...t.samples] })) });
      if (start < open) this.windows.delete(start);
    }
    return out;
  }
}

/**
 * The pool, with every statement it runs measured: tagged-template queries and `unsafe` (pg-boss's),
 * from the moment they are awaited (postgres.js sends a query then) to their answer. Transactions'
 * statements run on their own handle and are not measured; nor are fragments, which are never awaited.
 */
type Then = (this: unknown, onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) => unknown;

export function timedSql(sql: Sql, timings: QueryTimings): Sql {
  const measure = <Q>(query: Q, text: string): Q => {
    const q = query as unknown as { then?: Then };
    if (!q || typeof q.then !== 'function') return query;
    const then = q.then;
    let started: number | undefined;
    q.then = function (this: unknown, onFulfilled?: (v: unknown) => unknown, onRejected?: (e: unknown) => unknown) {
      if (started !== undefined) return then.call(this, onFulfilled, onRejected);
      started = performance.now();
      const done = () => timings.record(text, performance.now() - started!);
      return then.call(
        this,
        (value: unknown) => {
          done();
          return onFulfilled ? onFulfilled(value) : value;
        },
        (err: unknown) => {
          done();
          if (onRejected) return onRejected(err);
          throw err;
        },
      );
    };
    return query;
  };
  const unsafe = new Proxy(sql.unsafe, {
    apply(target, self, args: unknown[]) {
      const query = Reflect.apply(target, self, args) as unknown;
      return typeof args[0] === 'string' ? measure(query, args[0]) : query;
    },
  });
  return new Proxy(sql, {
    apply(target, self, args: unknown[]) {
      const result = Reflect.apply(target, self, args) as unknown;
      const strings = args[0] as { raw?: unknown } | undefined;
      // Only a tagged template is a statement; sql(value) builds identifiers and value lists.
      if (!Array.isArray(strings) || !('raw' in strings)) return result;
      return measure(result, (strings as string[]).map((s, i) => (i === 0 ? s : `$${i}${s}`)).join(''));
    },
    get(target, prop, receiver) {
      if (prop === 'unsafe') return unsafe;
      return Reflect.get(target, prop, receiver) as unknown;
    },
  });
}
