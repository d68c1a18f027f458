// SQL of the per-(tenant, mailbox provider) sub-caps: the cap rows, the daily counter taken by the gate, over-cap counts, and the reconciliation figures.
import type { Queryable } from '../db/connection.js';

export interface EspTake {
  /** The tenant's sub-cap for the provider; null when no row is seeded (nothing is counted then). */
  cap: number | null;
  /** The provider's count for the day after this send; null when nothing was counted (no cap, or enforced and full). */
  sent: number | null;
}

/**
 * Counts one send against the (tenant, provider, day) counter in one statement. Advisory: always
 * counted. Enforced: counted only below the cap (the row lock makes the cap exact under concurrency).
 */
export async function takeEsp(db: Queryable, t: { tenantId: string; provider: string; day: string; enforce: boolean }): Promise<EspTake> {
  const [row] = await db<{ cap: number | null; sent: number | null }[]>`
    with cap as (
      select daily_limit from warmup_esp_caps where tenant_id = ${t.tenantId} and provider = ${t.provider}
    ), took as (
      insert into warmup_esp_daily as w (tenant_id, provider, day, sent)
      select ${t.tenantId}, ${t.provider}, ${t.day}, 1 from cap where not ${t.enforce} or cap.daily_limit > 0
      on conflict (tenant_id, provider, day) do update set sent = w.sent + 1
        where not ${t.enforce} or w.sent < (select daily_limit from cap)
      returning w.sent
    )
    select (select daily_limit from cap) as cap, (select sent from took) as sent`;
  return { cap: row?.cap ?? null, sent: row?.sent ?? null };
}

/** Gives a counted send back (the send was not stored after all). */
export async function releaseEsp(db: Queryable, t: { tenantId: string; provider: string; day: string }): Promise<void> {
  await db`
    update warmup_esp_daily set sent = greatest(sent - 1, 0)
    where tenant_id = ${t.tenantId} and provider = ${t.provider} and day = ${t.day}`;
}

/** One send over the sub-cap for the sending domain: deferred (enforced) or only counted (advisory). */
export async function recordOverCap(db: Queryable, o: { tenantId: string; domainId: string; provider: string; day: string; enforced: boolean }): Promise<void> {
  const e = o.enforced ? 1 : 0;
  await db`
    insert into warmup_esp_throttles as w (tenant_id, domain_id, provider, day, over_cap, enforced)
    values (${o.tenantId}, ${o.domainId}, ${o.provider}, ${o.day}, 1, ${e})
    on conflict (tenant_id, domain_id, provider, day) do update set over_cap = w.over_cap + 1, enforced = w.enforced + ${e}`;
}

export async function espCaps(db: Queryable, tenantId: string): Promise<{ provider: string; daily_limit: number }[]> {
  return db<{ provider: string; daily_limit: number }[]>`select provider, daily_limit from warmup_esp_caps where tenant_id = ${tenantId} order by provider`;
}

export async function setEspCap(db: Queryable, tenantId: string, provider: string, limit: number | null): Promise<void> {
  if (limit === null) await db`delete from warmup_esp_caps where tenant_id = ${tenantId} and provider = ${provider}`;
  else {
    await db`
      insert into warmup_esp_caps (tenant_id, provider, daily_limit) values (${tenantId}, ${provider}, ${limit})
      on conflict (tenant_id, provider) do update set daily_limit = excluded.daily_limit`;
  }
}

/** Live sends of the tenant since `since`, per sending domain and recipient domain (classified into providers by the caller). */
export async function sendsByRecipientDomain(db: Queryable, tenantId: string, since: Date): Promise<{ domain_id: string; recipient_domain: string; sent: number }[]> {
  return db<{ domain_id: string; recipient_domain: string; sent: number }[]>`
    select domain_id, lower(split_part(to_email, '@', 2)) as recipient_domain, count(*)::int as sent
    from sends
    where tenant_id = ${tenantId} and created_at >= ${since} and mode = 'live' and domain_id is not null
      and status not in ('dropped', 'simulated')
    group by 1, 2`;
}

/** Over-cap counts per (sending domain, provider) for the UTC days from `fromDay`. */
export async function overCapCounts(db: Queryable, tenantId: string, fromDay: string): Promise<{ domain_id: string; provider: string; over_cap: number; enforced: number }[]> {
  return db<{ domain_id: string; provider: string; over_cap: number; enforced: number }[]>`
    select domain_id, provider, sum(over_cap)::int as over_cap, sum(enforced)::int as enforced
    from warmup_esp_throttles where tenant_id = ${tenantId} and day >= ${fromDay}
    group by 1, 2`;
}
