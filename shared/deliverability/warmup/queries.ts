// SQL for warm-up: each domain's tier and the per-(tenant, domain) daily counter, consumed atomically.
import type { Queryable } from '../../db/connection.js';

export interface WarmupRow {
  domain_id: string;
  tenant_id: string;
  tier: number;
  tier_changed_at: Date;
  last_send_at: Date | null;
  /** Set while the domain is paused (auto-ramp at high bounces, or a super-admin): its sends are deferred. */
  paused_at: Date | null;
}

/**
 * Each domain's warm-up row, created at the initial tier on first use (a new domain starts cold). One
 * round trip for any number of domains, no write once the rows exist.
 */
export async function warmupsOf(db: Queryable, domains: { tenantId: string; domainId: string }[], at: Date, initialTier: number): Promise<WarmupRow[]> {
  if (domains.length === 0) return [];
  const ids = domains.map((d) => d.domainId);
  const rows = await db<WarmupRow[]>`
    with req as (
      select distinct on (domain_id) domain_id, tenant_id from unnest(${ids}::uuid[], ${domains.map((d) => d.tenantId)}::uuid[]) as r(domain_id, tenant_id)
    ), created as (
      insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at)
      select domain_id, tenant_id, ${initialTier}::int, ${at} from req
      on conflict (domain_id) do nothing
      returning domain_id, tenant_id, tier, tier_changed_at, last_send_at, paused_at
    )
    select * from created
    union all
    select w.domain_id, w.tenant_id, w.tier, w.tier_changed_at, w.last_send_at, w.paused_at from domain_warmup w
    where w.domain_id in (select domain_id from req) and w.domain_id not in (select domain_id from created)`;
  const missing = ids.filter((id) => !rows.some((r) => r.domain_id === id));
  if (missing.length === 0) return rows;
  // Another transaction created a row after this statement's snapshot was taken: read it now.
  const raced = await db<WarmupRow[]>`
    select domain_id, tenant_id, tier, tier_changed_at, last_send_at, paused_at from domain_warmup where domain_id = any(${missing}::uuid[])`;
  return [...rows, ...raced];
}

export async function warmupOf(db: Queryable, tenantId: string, domainId: string, at: Date, initialTier: number): Promise<WarmupRow> {
  const [row] = await warmupsOf(db, [{ tenantId, domainId }], at, initialTier);
  return row!;
}

/** The domain's warm-up row as it stands, without creating it (undefined: the domain never sent). */
export async function findWarmup(db: Queryable, domainId: string): Promise<WarmupRow | undefined> {
  const [row] = await db<WarmupRow[]>`
    select domain_id, tenant_id, tier, tier_changed_at, last_send_at, paused_at from domain_warmup where domain_id = ${domainId}`;
  return row;
}

/** Back to the initial tier after a long idle spell (receivers forget a sender's reputation). */
export async function resetTier(db: Queryable, domainId: string, at: Date, initialTier: number): Promise<void> {
  await db`update domain_warmup set tier = ${initialTier}, tier_changed_at = ${at} where domain_id = ${domainId}`;
}

/** Marks the domain as sending today; written at most once per UTC day, off the per-send path. */
export async function touchLastSend(db: Queryable, domainId: string, at: Date, dayStart: Date): Promise<void> {
  await db`
    update domain_warmup set last_send_at = ${at}
    where domain_id = ${domainId} and (last_send_at is null or last_send_at < ${dayStart})`;
}

export interface DailyTake {
  tenantId: string;
  domainId: string;
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  cap: number;
  want: number;
}

/**
 * Takes sends from each (tenant, domain, day) allowance, up to its cap; returns per take how many
 * it got and the counter after. One statement for any number of counters (one take per counter);
 * the row lock makes it exact under any concurrency (200 parallel sends against a cap of 50 admit
 * exactly 50), and `last_grant` reports this statement's share without a separate read.
 */
export async function consumeDailyMany(db: Queryable, takes: DailyTake[]): Promise<{ granted: number; sent: number | undefined }[]> {
  const open = takes.filter((k) => k.cap > 0);
  if (open.length === 0) return takes.map(() => ({ granted: 0, sent: undefined }));
  const rows = await db<{ tenant_id: string; domain_id: string; day: string; sent: number; last_grant: number }[]>`
    with req as (
      select * from unnest(${open.map((k) => k.tenantId)}::uuid[], ${open.map((k) => k.domainId)}::uuid[],
        ${open.map((k) => k.day)}::date[], ${open.map((k) => k.cap)}::int[], ${open.map((k) => k.want)}::int[]) as r(tenant_id, domain_id, day, cap, want)
    )
    insert into warmup_daily_counters as w (tenant_id, domain_id, day, sent, last_grant)
    select tenant_id, domain_id, day, least(want, cap), least(want, cap) from req
    on conflict (tenant_id, domain_id, day) do update
      set sent = w.sent + least(excluded.last_grant,
                                (select r.cap from req r where r.tenant_id = w.tenant_id and r.domain_id = w.domain_id and r.day = w.day) - w.sent),
          last_grant = least(excluded.last_grant,
                             (select r.cap from req r where r.tenant_id = w.tenant_id and r.domain_id = w.domain_id and r.day = w.day) - w.sent)
      where w.sent < (select r.cap from req r where r.tenant_id = w.tenant_id and r.domain_id = w.domain_id and r.day = w.day)
    returning w.tenant_id, w.domain_id, to_char(w.day, 'YYYY-MM-DD') as day, w.sent, w.last_grant`;
  return takes.map((k) => {
    const row = rows.find((r) => r.tenant_id === k.tenantId && r.domain_id === k.domainId && r.day === k.day);
    return row && k.cap > 0 ? { granted: row.last_grant, sent: row.sent } : { granted: 0, sent: undefined };
  });
}

/** Takes one send from the day's allowance if the counter is below `cap`: the new count, or undefined at the cap. */
export async function consumeDaily(db: Queryable, c: { tenantId: string; domainId: string; day: string; cap: number }): Promise<number | undefined> {
  const [taken] = await consumeDailyMany(db, [{ ...c, want: 1 }]);
  return taken!.granted > 0 ? taken!.sent : undefined;
}

export async function dailyCount(db: Queryable, tenantId: string, domainId: string, day: string): Promise<number> {
  const [row] = await db<{ sent: number }[]>`
    select sent from warmup_daily_counters where tenant_id = ${tenantId} and domain_id = ${domainId} and day = ${day}`;
  return row?.sent ?? 0;
}

/** Gives a counted send back (the send failed to commit after the gate counted it). */
export async function releaseDaily(db: Queryable, c: { tenantId: string; domainId: string; day: string }): Promise<void> {
  await db`
    update warmup_daily_counters set sent = greatest(sent - 1, 0)
    where tenant_id = ${c.tenantId} and domain_id = ${c.domainId} and day = ${c.day}`;
}
