// SQL of the per-(tenant, mailbox provider) sub-caps: the cap rows, the daily counter taken by the gate, over-cap counts, and the reconciliation figures.
import type { Queryable } from '../../db/connection.js';

export interface EspTakeMany {
  tenantId: string;
  provider: string;
  day: string;
  /** How many sends ask at once. */
  want: number;
}

export interface EspGrant {
  /** The tenant's sub-cap for the provider; null when no row is seeded (nothing is counted then). */
  cap: number | null;
  /** How many of the asking sends were counted: all (advisory), or up to the cap (enforced). */
  granted: number;
  /** The provider's count for the day after the grant; null when nothing was counted. */
  sent: number | null;
}

/**
 * Counts sends against (tenant, provider, day) counters in one statement, each counter once for all the sends
 * that asked. Advisory: everything is counted (over the cap too: those are the "would have throttled" ones).
 * Enforced: counted only up to the cap; the row lock of the upsert makes the grant exact under concurrency, and
 * last_grant carries it back (RETURNING sees only the new count).
 */
export async function takeEspMany(db: Queryable, enforce: boolean, takes: EspTakeMany[]): Promise<EspGrant[]> {
  if (takes.length === 0) return [];
  const rows = await db<{ tenant_id: string; provider: string; day: string; cap: number; sent: number | null; last_grant: number | null }[]>`
    with req as (
      select r.tenant_id, r.provider, r.day, r.want, c.daily_limit as cap
      from unnest(${takes.map((k) => k.tenantId)}::uuid[], ${takes.map((k) => k.provider)}::text[],
                  ${takes.map((k) => k.day)}::date[], ${takes.map((k) => k.want)}::int[]) as r(tenant_id, provider, day, want)
      join warmup_esp_caps c on c.tenant_id = r.tenant_id and c.provider = r.provider
    ), took as (
      insert into warmup_esp_daily as w (tenant_id, provider, day, sent, last_grant)
      select tenant_id, provider, day, g, g
      from (select *, case when ${enforce} then least(want, cap) else want end as g from req) x
      where g > 0
      on conflict (tenant_id, provider, day) do update
        set sent = w.sent + case when ${enforce}
                     then least(excluded.last_grant,
                                (select r.cap from req r where r.tenant_id = w.tenant_id and r.provider = w.provider and r.day = w.day) - w.sent)
                     else excluded.last_grant end,
            last_grant = case when ${enforce}
                     then least(excluded.last_grant,
                                (select r.cap from req r where r.tenant_id = w.tenant_id and r.provider = w.provider and r.day = w.day) - w.sent)
                     else excluded.last_grant end
        where not ${enforce} or w.sent < (select r.cap from req r where r.tenant_id = w.tenant_id and r.provider = w.provider and r.day = w.day)
      returning w.tenant_id, w.provider, w.day, w.sent, w.last_grant
    )
    select req.tenant_id, req.provider, to_char(req.day, 'YYYY-MM-DD') as day, req.cap, took.sent, took.last_grant
    from req left join took on took.tenant_id = req.tenant_id and took.provider = req.provider and took.day = req.day`;
  const key = (tenantId: string, provider: string, day: string) => `${tenantId}|${provider}|${day}`;
  const byKey = new Map(rows.map((r) => [key(r.tenant_id, r.provider, r.day), r]));
  return takes.map((k) => {
    const row = byKey.get(key(k.tenantId, k.provider, k.day));
    if (!row) return { cap: null, granted: 0, sent: null };
    return { cap: row.cap, granted: row.last_grant ?? 0, sent: row.last_grant ? row.sent : null };
  });
}

/** Gives a counted send back (the send was not stored after all). */
export async function releaseEsp(db: Queryable, t: { tenantId: string; provider: string; day: string }): Promise<void> {
  await db`
    update warmup_esp_daily set sent = greatest(sent - 1, 0)
    where tenant_id = ${t.tenantId} and provider = ${t.provider} and day = ${t.day}`;
}

/** Sends over the sub-cap per sending domain: deferred (enforced) or only counted (advisory), several counted at once. */
export async function recordOverCapMany(
  db: Queryable,
  rows: { tenantId: string; domainId: string; provider: string; day: string; overCap: number; enforced: number }[],
): Promise<void> {
  if (rows.length === 0) return;
  await db`
    insert into warmup_esp_throttles as w (tenant_id, domain_id, provider, day, over_cap, enforced)
    select * from unnest(${rows.map((r) => r.tenantId)}::uuid[], ${rows.map((r) => r.domainId)}::uuid[], ${rows.map((r) => r.provider)}::text[],
                         ${rows.map((r) => r.day)}::date[], ${rows.map((r) => r.overCap)}::int[], ${rows.map((r) => r.enforced)}::int[])
    on conflict (tenant_id, domain_id, provider, day) do update set over_cap = w.over_cap + excluded.over_cap, enforced = w.enforced + excluded.enforced`;
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
export async function sendsByRecipientDomain(
  db: Queryable,
  tenantId: string,
  since: Date,
): Promise<{ domain_id: string; recipient_domain: string; sent: number }[]> {
  return db<{ domain_id: string; recipient_domain: string; sent: number }[]>`
    select domain_id, lower(split_part(to_email, '@', 2)) as recipient_domain, count(*)::int as sent
    from sends
    where tenant_id = ${tenantId} and created_at >= ${since} and mode = 'live' and domain_id is not null
      and status not in ('dropped', 'simulated')
    group by 1, 2`;
}

/** Over-cap counts per (sending domain, provider) for the UTC days from `fromDay`. */
export async function overCapCounts(
  db: Queryable,
  tenantId: string,
  fromDay: string,
): Promise<{ domain_id: string; provider: string; over_cap: number; enforced: number }[]> {
  return db<{ domain_id: string; provider: string; over_cap: number; enforced: number }[]>`
    select domain_id, provider, sum(over_cap)::int as over_cap, sum(enforced)::int as enforced
    from warmup_esp_throttles where tenant_id = ${tenantId} and day >= ${fromDay}
    group by 1, 2`;
}
