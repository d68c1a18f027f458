// SQL for warm-up: each domain's tier and the per-(tenant, domain) daily counter, consumed atomically.
import type { Queryable } from '../db/connection.js';

export interface WarmupRow {
  domain_id: string;
  tenant_id: string;
  tier: number;
  tier_changed_at: Date;
  last_send_at: Date | null;
}

/** The domain's warm-up row, created at tier 0 on first use (a new domain starts cold). One round trip, no write once it exists. */
export async function warmupOf(db: Queryable, tenantId: string, domainId: string, at: Date): Promise<WarmupRow> {
  const [row] = await db<WarmupRow[]>`
    with created as (
      insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at)
      values (${domainId}, ${tenantId}, 0, ${at})
      on conflict (domain_id) do nothing
      returning domain_id, tenant_id, tier, tier_changed_at, last_send_at
    )
    select * from created
    union all
    select domain_id, tenant_id, tier, tier_changed_at, last_send_at from domain_warmup
    where domain_id = ${domainId} and not exists (select 1 from created)`;
  if (row) return row;
  // Another transaction created the row after this statement's snapshot was taken: read it now.
  const [raced] = await db<WarmupRow[]>`select domain_id, tenant_id, tier, tier_changed_at, last_send_at from domain_warmup where domain_id = ${domainId}`;
  return raced!;
}

/** Back to tier 0 after a long idle spell (receivers forget a sender's reputation). */
export async function resetTier(db: Queryable, domainId: string, at: Date): Promise<void> {
  await db`update domain_warmup set tier = 0, tier_changed_at = ${at} where domain_id = ${domainId}`;
}

/** Marks the domain as sending today; written at most once per UTC day, off the per-send path. */
export async function touchLastSend(db: Queryable, domainId: string, at: Date, dayStart: Date): Promise<void> {
  await db`
    update domain_warmup set last_send_at = ${at}
    where domain_id = ${domainId} and (last_send_at is null or last_send_at < ${dayStart})`;
}

/**
 * Takes one send from the day's allowance if the counter is below `cap`; returns the new count,
 * or undefined when the cap is reached. One statement: the row lock makes it exact under any
 * concurrency (200 parallel sends against a cap of 50 admit exactly 50).
 */
export async function consumeDaily(db: Queryable, c: { tenantId: string; domainId: string; day: string; cap: number }): Promise<number | undefined> {
  if (c.cap <= 0) return undefined;
  const [row] = await db<{ sent: number }[]>`
    insert into warmup_daily_counters as w (tenant_id, domain_id, day, sent)
    values (${c.tenantId}, ${c.domainId}, ${c.day}, 1)
    on conflict (tenant_id, domain_id, day) do update set sent = w.sent + 1
    where w.sent < ${c.cap}
    returning sent`;
  return row?.sent;
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
