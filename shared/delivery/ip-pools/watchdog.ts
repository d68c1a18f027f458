// One outbound process's view of the IP pools: which pool a send uses, which member it goes out from (round-robin, skipping quarantined ones), and
// quarantining a member on a block reply; the shared state is in PostgreSQL, cached briefly.
import { performance } from 'node:perf_hooks';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { blockRuleFor, type ReplySeen } from './block-rules.js';
import { activeQuarantines, domainName, quarantineAddress } from './queries.js';

export interface WatchdogDeps {
  sql: Sql;
  config: Pick<Config, 'ipPools' | 'ipWatchdog'>;
  clock: Clock;
  log: Logger;
}

/** Where a delivery goes out from. */
export type SourcePick =
  /** The send has no pool: the operating system picks the address. */
  | { kind: 'any' }
  | { kind: 'address'; pool: string; address: string }
  /** Every member of the send's pool is quarantined: nothing may go out; `until` is the earliest end. */
  | { kind: 'quarantined'; pool: string; until: Date };

// Domain names of sends, for pools assigned by domain: a domain's name never changes, so the cache only needs a bound.
const DOMAIN_CACHE_MAX = 10_000;

export class IpWatchdog {
  private quarantined = new Map<string, Date>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | undefined;
  private readonly turn = new Map<string, number>();
  private readonly domains = new Map<string, string | null>();

  constructor(private readonly deps: WatchdogDeps) {}

  /** The pool a send uses: its sending domain's, else its tenant's, else the default (null: none). */
  async poolOf(send: { tenantId: string; domainId: string | null }): Promise<string | null> {
    const c = this.deps.config.ipPools;
    if (send.domainId !== null && Object.keys(c.domains).length > 0) {
      const name = await this.domainNameOf(send.domainId);
      if (name !== null && Object.hasOwn(c.domains, name)) return c.domains[name]!;
    }
    if (Object.hasOwn(c.tenants, send.tenantId)) return c.tenants[send.tenantId]!;
    return c.default_pool;
  }

  /**
   * The source address of the next delivery of a send: the pool's members in turn (per process),
   * skipping the quarantined ones. Never an address quarantined as far as this process knows.
   */
  async pick(send: { tenantId: string; domainId: string | null }): Promise<SourcePick> {
    const pool = await this.poolOf(send);
    if (pool === null) return { kind: 'any' };
    const members = this.deps.config.ipPools.pools[pool]!;
    await this.fresh();
    const now = this.deps.clock.now().getTime();
    const start = this.turn.get(pool) ?? 0;
    let earliest = Number.POSITIVE_INFINITY;
    for (let i = 0; i < members.length; i++) {
      const index = (start + i) % members.length;
      const address = members[index]!;
      const until = this.quarantined.get(address)?.getTime();
      if (until === undefined || until <= now) {
        this.turn.set(pool, index + 1);
        return { kind: 'address', pool, address };
      }
      earliest = Math.min(earliest, until);
    }
    return { kind: 'quarantined', pool, until: new Date(earliest) };
  }

  /** The block rule a reply meets, or null (see config/ip-watchdog.yaml). */
  blockRule(reply: ReplySeen): string | null {
    return blockRuleFor(this.deps.config.ipWatchdog, reply);
  }

  /**
   * Looks at a reply a delivery from `source` got: when a block rule matches, the address is
   * quarantined for the cool-down (once: a quarantine in force is left as it is). Returns the
   * rule that matched, or null.
   */
  async observe(
    source: { pool: string; address: string },
    reply: ReplySeen,
    facts: { destination: string | null; sendId: string | null },
  ): Promise<string | null> {
    const rule = this.blockRule(reply);
    if (rule === null) return null;
    const at = this.deps.clock.now();
    const until = new Date(at.getTime() + this.deps.config.ipWatchdog.cooldown_minutes * 60_000);
    const row = await quarantineAddress(this.deps.sql, {
      address: source.address,
      pool: source.pool,
      rule,
      reply: reply.text,
      destination: facts.destination,
      sendId: facts.sendId,
      at,
      until,
    });
    // This process stops using it at once, whichever process quarantined it first.
    const known = this.quarantined.get(source.address);
    if (row) {
      this.quarantined.set(source.address, row.quarantined_until);
      this.deps.log.warn(
        { address: source.address, pool: source.pool, rule, reply: reply.text, destination: facts.destination, until: row.quarantined_until.toISOString() },
        'source address quarantined',
      );
    } else if (known === undefined || known.getTime() <= at.getTime()) {
      this.loadedAt = Number.NEGATIVE_INFINITY;
    }
    return rule;
  }

  /** Rereads the quarantines when the cached copy is older than state_cache_ms; concurrent callers share one read. */
  private async fresh(): Promise<void> {
    if (performance.now() - this.loadedAt < this.deps.config.ipWatchdog.state_cache_ms) return;
    this.loading ??= (async () => {
      try {
        const rows = await activeQuarantines(this.deps.sql, this.deps.clock.now());
        this.quarantined = new Map(rows.map((r) => [r.address, r.quarantined_until]));
        this.loadedAt = performance.now();
      } finally {
        this.loading = undefined;
      }
    })();
    await this.loading;
  }

  private async domainNameOf(domainId: string): Promise<string | null> {
    const cached = this.domains.get(domainId);
    if (cached !== undefined) return cached;
    const name = (await domainName(this.deps.sql, domainId)) ?? null;
    if (this.domains.size >= DOMAIN_CACHE_MAX) this.domains.clear();
    this.domains.set(domainId, name);
    return name;
  }
}
