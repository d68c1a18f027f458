// SQL of the auto-ramp and overrides: verified domains, a day's delivery outcomes, the locked warm-up row, moves and their record.
import type { Queryable } from '../../db/connection.js';

export interface RampDomain {
  domain_id: string;
  tenant_id: string;
  name: string;
}

/** Every verified sending domain (the ramp's scope), oldest first so runs are deterministic. */
export async function verifiedDomains(db: Queryable): Promise<RampDomain[]> {
  return db<RampDomain[]>`
    select id as domain_id, tenant_id, name from domains where verified_at is not null order by created_at, id`;
}

/**
 * Outcomes of a domain's live sends created in [from, to): dropped and simulated ones never left and
 * do not count. bounced: the send ended bounced or got a hard bounce (a DSN after delivery included);
 * complained: a complaint arrived for it; delivered: delivered and not bounced since.
 */
export async function dayOutcomes(
  db: Queryable,
  d: { tenantId: string; domainId: string; from: Date; to: Date },
): Promise<{ sent: number; delivered: number; bounced: number; complained: number }> {
  const [row] = await db<{ sent: number; delivered: number; bounced: number; complained: number }[]>`
    with day_sends as (
      select s.id, s.status from sends s
      where s.tenant_id = ${d.tenantId} and s.domain_id = ${d.domainId} and s.mode = 'live'
        and s.status not in ('dropped', 'simulated') and s.created_at >= ${d.from} and s.created_at < ${d.to}
    ), judged as (
      select ds.status,
        ds.status = 'bounced' or exists (select 1 from events e where e.send_id = ds.id and e.type = 'bounce' and e.subtype = 'hard') as bounced,
        exists (select 1 from events e where e.send_id = ds.id and e.type = 'complaint') as complained,
        exists (select 1 from events e where e.send_id = ds.id and e.type = 'delivered') as delivered
      from day_sends ds
    )
    select count(*)::int as sent,
      count(*) filter (where not bounced and (status = 'delivered' or delivered))::int as delivered,
      count(*) filter (where bounced)::int as bounced,
      count(*) filter (where complained)::int as complained
    from judged`;
  return row!;
}

export interface LockedWarmup {
  domain_id: string;
  tenant_id: string;
  tier: number;
  tier_changed_at: Date;
  last_send_at: Date | null;
  paused_at: Date | null;
  paused_reason: string | null;
  held_until: Date | null;
}

/** The domain's warm-up row under a row lock (create it first with warmupsOf): moves of one domain never interleave. */
export async function lockWarmup(tx: Queryable, domainId: string): Promise<LockedWarmup | undefined> {
  const [row] = await tx<LockedWarmup[]>`
    select domain_id, tenant_id, tier, tier_changed_at, last_send_at, paused_at, paused_reason, held_until
    from domain_warmup where domain_id = ${domainId} for update`;
  return row;
}

export interface NewMove {
  tenantId: string;
  domainId: string;
  source: 'auto' | 'override';
  ratesDay: string | null;
  action: string;
  fromTier: number;
  toTier: number;
  reason: string;
  rates: Record<string, unknown> | null;
  actorId: string | null;
  at: Date;
}

export interface MoveRow {
  id: string;
  tenant_id: string;
  domain_id: string;
  source: 'auto' | 'override';
  rates_day: string | null;
  action: string;
  from_tier: number;
  to_tier: number;
  reason: string;
  rates: Record<string, unknown> | null;
  actor_id: string | null;
  created_at: Date;
}

const MOVE_COLUMNS =
  "id::text, tenant_id, domain_id, source, to_char(rates_day, 'YYYY-MM-DD') as rates_day, action, from_tier, to_tier, reason, rates, actor_id, created_at";

/** Records a move; for the ramp, undefined when the (tenant, domain, day) already has one (the re-run is a no-op). */
export async function insertMove(tx: Queryable, m: NewMove): Promise<MoveRow | undefined> {
  const [row] = await tx<MoveRow[]>`
    insert into warmup_moves (tenant_id, domain_id, source, rates_day, action, from_tier, to_tier, reason, rates, actor_id, created_at)
    values (${m.tenantId}, ${m.domainId}, ${m.source}, ${m.ratesDay}, ${m.action}, ${m.fromTier}, ${m.toTier}, ${m.reason},
            ${m.rates ? tx.json(m.rates as never) : null}, ${m.actorId}, ${m.at})
    on conflict (tenant_id, domain_id, rates_day) where source = 'auto' do nothing
    returning ${tx.unsafe(MOVE_COLUMNS)}`;
  return row;
}

export async function setTier(tx: Queryable, domainId: string, tier: number, at: Date): Promise<void> {
  await tx`update domain_warmup set tier = ${tier}, tier_changed_at = ${at} where domain_id = ${domainId}`;
}

export async function setPaused(tx: Queryable, domainId: string, pause: { at: Date; reason: string } | null): Promise<void> {
  await tx`update domain_warmup set paused_at = ${pause?.at ?? null}, paused_reason = ${pause?.reason ?? null} where domain_id = ${domainId}`;
}

export async function setHeldUntil(tx: Queryable, domainId: string, until: Date | null): Promise<void> {
  await tx`update domain_warmup set held_until = ${until} where domain_id = ${domainId}`;
}

/** A tenant's moves, newest first (optionally of one domain). */
export async function listMoves(db: Queryable, tenantId: string, o: { domainId?: string; limit: number }): Promise<MoveRow[]> {
  return db<MoveRow[]>`
    select ${db.unsafe(MOVE_COLUMNS)} from warmup_moves
    where tenant_id = ${tenantId} ${o.domainId ? db`and domain_id = ${o.domainId}` : db``}
    order by created_at desc, id desc limit ${o.limit}`;
}

export interface DomainWarmupView extends LockedWarmup {
  name: string;
  verified: boolean;
}

/** A tenant's domains with their warm-up rows (domains that never sent have none yet: tier 0). */
export async function tenantWarmups(db: Queryable, tenantId: string): Promise<DomainWarmupView[]> {
  return db<DomainWarmupView[]>`
    select d.id as domain_id, d.tenant_id, d.name, d.verified_at is not null as verified,
      coalesce(w.tier, 0)::int as tier, coalesce(w.tier_changed_at, d.created_at) as tier_changed_at,
      w.last_send_at, w.paused_at, w.paused_reason, w.held_until
    from domains d left join domain_warmup w on w.domain_id = d.id
    where d.tenant_id = ${tenantId} order by d.created_at, d.id`;
}

/** Seeds the configured sub-caps for these tenants; rows that exist (possibly changed by an operator) are kept. */
export async function seedEspCaps(db: Queryable, tenantIds: string[], caps: Record<string, number>): Promise<number> {
  const providers = Object.keys(caps);
  if (tenantIds.length === 0 || providers.length === 0) return 0;
  const rows = await db`
    insert into warmup_esp_caps (tenant_id, provider, daily_limit)
    select t, p.provider, p.daily_limit
    from unnest(${tenantIds}::uuid[]) as t
    cross join unnest(${providers}::text[], ${providers.map((p) => caps[p]!)}::int[]) as p(provider, daily_limit)
    on conflict do nothing returning tenant_id`;
  return rows.count;
}
