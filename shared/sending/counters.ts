// The counters the send path takes from (monthly quota, warm-up rows and daily allowances, per-ESP sub-caps), batched across concurrent sends: one statement
// at a time per kind, for all the sends that asked meanwhile.
import type { Queryable } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Logger } from '../kernel/log.js';
import { consumeMonthlyMany } from '../limits/quota/usage.js';
import { recordOverCapMany, takeEspMany } from '../deliverability/warmup/per-esp-queries.js';
import { consumeDailyMany, warmupsOf, type WarmupRow } from '../deliverability/warmup/queries.js';
import { utcMonth } from '../deliverability/warmup/tiers.js';

export interface SendCounters {
  /** Counts one send against the tenant's plan: the usage after it, or undefined at the cap. */
  takeQuota(tenantId: string, at: Date): Promise<{ used: number | undefined; cap: number }>;
  /** The domain's warm-up row (created at the initial tier on first use). */
  warmupOf(tenantId: string, domainId: string, at: Date): Promise<WarmupRow>;
  /** Takes one send from the day's allowance: the count after it, or undefined at the cap. */
  takeDaily(c: { tenantId: string; domainId: string; day: string; cap: number }): Promise<number | undefined>;
  /**
   * Counts one send against the (tenant, provider, day) sub-cap counter: the cap (null: no row seeded, nothing
   * counted) and the count after this send (null: enforced and the cap is reached, so not counted).
   */
  takeEsp(t: { tenantId: string; provider: string; day: string; enforce: boolean }): Promise<{ cap: number | null; sent: number | null }>;
  /** Counts one send over its sub-cap for the sending domain (deferred when enforced, only counted when advisory). */
  countOverCap(o: { tenantId: string; domainId: string; provider: string; day: string; enforced: boolean }): Promise<void>;
}

const MAX_BATCH = 500;

/** Groups a tick's requests by counter, preserving their order within each group. */
function groupBy<K>(keys: readonly K[], id: (k: K) => string): Map<string, number[]> {
  const groups = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const g = groups.get(id(k));
    if (g) g.push(i);
    else groups.set(id(k), [i]);
  });
  return groups;
}

/**
 * A counter row is a hot spot: every send of a tenant updates the same row, and each statement
 * holds its lock until its commit is flushed, so one statement per send queues the sends behind
 * each other's WAL flushes. Here one statement per kind runs at a time (group commit), taking for
 * all the sends that asked while the previous one ran: each counter once with want = how many
 * asked. The grant is shared out in arrival order, so each send gets its own exact count, and the
 * sends beyond the grant are refused (quota) or deferred (warm-up) exactly as one statement per
 * send would have decided.
 */
export function createSendCounters(db: Queryable, log: Logger, initialTier: number): SendCounters {
  const quota = new GroupCommit<{ tenantId: string; month: string }, { used: number | undefined; cap: number }>(
    async (keys) => {
      const groups = [...groupBy(keys, (k) => `${k.tenantId}|${k.month}`).values()];
      const taken = await consumeMonthlyMany(
        db,
        groups.map((g) => ({ ...keys[g[0]!]!, want: g.length })),
      );
      const answers: { used: number | undefined; cap: number }[] = new Array(keys.length);
      groups.forEach((g, gi) => {
        const t = taken[gi]!;
        const first = (t.used ?? 0) - t.granted + 1;
        g.forEach((keyIndex, i) => (answers[keyIndex] = { used: i < t.granted ? first + i : undefined, cap: t.cap }));
      });
      return answers;
    },
    log,
    'quota counts',
    MAX_BATCH,
  );

  // Read-mostly (a write only for a domain's first send), but batched the same way: one statement at a time.
  const warmups = new GroupCommit<{ tenantId: string; domainId: string; at: Date }, WarmupRow>(
    async (keys) => {
      const rows = await warmupsOf(db, keys, keys[0]!.at, initialTier);
      return keys.map((k) => {
        const row = rows.find((r) => r.domain_id === k.domainId);
        if (!row) throw new Error(`no warm-up row for domain ${k.domainId}`);
        return row;
      });
    },
    log,
    'warm-up reads',
    MAX_BATCH,
  );

  const daily = new GroupCommit<{ tenantId: string; domainId: string; day: string; cap: number }, number | undefined>(
    async (keys) => {
      const groups = [...groupBy(keys, (k) => `${k.tenantId}|${k.domainId}|${k.day}`).values()];
      // Sends of one tick may have read different tiers if a tier changed in between: the lowest cap holds for all.
      const taken = await consumeDailyMany(
        db,
        groups.map((g) => ({ ...keys[g[0]!]!, cap: Math.min(...g.map((i) => keys[i]!.cap)), want: g.length })),
      );
      const answers: (number | undefined)[] = new Array(keys.length);
      groups.forEach((g, gi) => {
        const t = taken[gi]!;
        const first = (t.sent ?? 0) - t.granted + 1;
        g.forEach((keyIndex, i) => (answers[keyIndex] = i < t.granted ? first + i : undefined));
      });
      return answers;
    },
    log,
    'warm-up counts',
    MAX_BATCH,
  );

  // One batcher per mode (WARMUP_PER_ESP_ENFORCE is read once, but the gate passes it per send): a batch is one statement.
  const espCounter = (enforce: boolean) =>
    new GroupCommit<{ tenantId: string; provider: string; day: string }, { cap: number | null; sent: number | null }>(
      async (keys) => {
        const groups = [...groupBy(keys, (k) => `${k.tenantId}|${k.provider}|${k.day}`).values()];
        const taken = await takeEspMany(
          db,
          enforce,
          groups.map((g) => ({ ...keys[g[0]!]!, want: g.length })),
        );
        const answers: { cap: number | null; sent: number | null }[] = new Array(keys.length);
        groups.forEach((g, gi) => {
          const t = taken[gi]!;
          const first = (t.sent ?? 0) - t.granted + 1;
          g.forEach((keyIndex, i) => (answers[keyIndex] = { cap: t.cap, sent: i < t.granted ? first + i : null }));
        });
        return answers;
      },
      log,
      'per-ESP counts',
      MAX_BATCH,
    );
  const esp = { advisory: espCounter(false), enforced: espCounter(true) };

  const overCap = new GroupCommit<{ tenantId: string; domainId: string; provider: string; day: string; enforced: boolean }, void>(
    async (keys) => {
      const groups = [...groupBy(keys, (k) => `${k.tenantId}|${k.domainId}|${k.provider}|${k.day}`).values()];
      await recordOverCapMany(
        db,
        groups.map((g) => ({ ...keys[g[0]!]!, overCap: g.length, enforced: g.filter((i) => keys[i]!.enforced).length })),
      );
      return keys.map(() => undefined);
    },
    log,
    'per-ESP over-cap counts',
    MAX_BATCH,
  );

  return {
    takeEsp: ({ enforce, ...t }) => (enforce ? esp.enforced : esp.advisory).write(t),
    countOverCap: (o) => overCap.write(o),
    takeQuota: (tenantId, at) => quota.write({ tenantId, month: utcMonth(at) }),
    warmupOf: (tenantId, domainId, at) => warmups.write({ tenantId, domainId, at }),
    takeDaily: (c) => daily.write(c),
  };
}
