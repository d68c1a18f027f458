// SQL of the reputation report: each sending domain of a tenant with its warm-up row and today's counter, and per-window send outcomes.
import type { Queryable } from '../../db/connection.js';

export interface DomainWarmupRow {
  id: string;
  name: string;
  verified_at: Date | null;
  /** Null when the domain never went through the warm-up gate (it starts at tier 0). */
  tier: number | null;
  last_send_at: Date | null;
  sent_today: number;
}

export async function domainsWithWarmup(db: Queryable, tenantId: string, day: string): Promise<DomainWarmupRow[]> {
  return db<DomainWarmupRow[]>`
    select d.id, d.name, d.verified_at, w.tier, w.last_send_at, coalesce(c.sent, 0)::int as sent_today
    from domains d
    left join domain_warmup w on w.domain_id = d.id
    left join warmup_daily_counters c on c.tenant_id = d.tenant_id and c.domain_id = d.id and c.day = ${day}::date
    where d.tenant_id = ${tenantId}
    order by d.name`;
}

/** Outcome counts of one domain's live sends created in a window (docs/deliverability.md: Reputation). */
export interface WindowCounts {
  domain_id: string;
  days: number;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  engaged: number;
}

/**
 * Per domain and window (sends created since each `since`, up to `until`): live sends that left or were refused
 * by the remote (sent = delivered + bounced; test-key, simulated, dropped and still-queued sends are not counted);
 * delivered without a later bounce; bounced (a bounce reply, an asynchronous bounce report, or retries exhausted);
 * of the delivered, those with a complaint, and those with a human open or click (machine opens and scanner
 * clicks excluded). One pass over the sends of the widest window, one index probe of events per send.
 */
export async function windowCounts(db: Queryable, tenantId: string, windows: readonly { days: number; since: Date }[], until: Date): Promise<WindowCounts[]> {
  const widest = new Date(Math.min(...windows.map((w) => w.since.getTime())));
  return db<WindowCounts[]>`
    with outcome as (
      select s.domain_id, s.created_at,
        (s.status = 'delivered' and not coalesce(ev.bounced, false)) as delivered,
        (s.status in ('bounced', 'failed') or coalesce(ev.bounced, false)) as bounced,
        coalesce(ev.complained, false) as complained,
        coalesce(ev.engaged, false) as engaged
      from sends s
      left join lateral (
        select bool_or(e.type = 'bounce') as bounced, bool_or(e.type = 'complaint') as complained,
          bool_or((e.type = 'open' and not coalesce((e.detail ->> 'machine')::boolean, false))
            or (e.type = 'click' and not coalesce((e.detail ->> 'scanner')::boolean, false))) as engaged
        from events e where e.send_id = s.id
      ) ev on true
      where s.tenant_id = ${tenantId} and s.mode = 'live' and s.domain_id is not null
        and s.created_at >= ${widest} and s.created_at <= ${until}
        and s.status in ('delivered', 'bounced', 'failed')
    )
    select o.domain_id, w.days,
      count(*)::int as sent,
      count(*) filter (where o.delivered)::int as delivered,
      count(*) filter (where o.bounced)::int as bounced,
      count(*) filter (where o.delivered and o.complained)::int as complained,
      count(*) filter (where o.delivered and o.engaged)::int as engaged
    from outcome o
    join unnest(${windows.map((w) => w.days)}::int[], ${windows.map((w) => w.since.toISOString())}::timestamptz[]) as w(days, since) on o.created_at >= w.since
    group by o.domain_id, w.days`;
}
