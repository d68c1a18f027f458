// SQL of the IP watchdog: quarantining a pool address (with its event and audit row), releasing it, expiring quarantines at the end of their cool-down, and
// the rows /admin/ip-watchdog shows.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Queryable, Sql } from '../../db/connection.js';

export interface QuarantineRow {
  address: string;
  pool: string;
  quarantined_at: Date;
  quarantined_until: Date;
  rule: string;
  event_id: string;
}

export interface WatchdogEventRow {
  id: string;
  occurred_at: Date;
  kind: 'quarantined' | 'released' | 'expired';
  address: string;
  pool: string | null;
  rule: string | null;
  reply: string | null;
  destination: string | null;
  send_id: string | null;
  quarantined_until: Date | null;
  actor_id: string | null;
}

const SYSTEM: AuditActor = { type: 'system', id: null };

export interface NewQuarantine {
  address: string;
  pool: string;
  rule: string;
  reply: string;
  destination: string | null;
  sendId: string | null;
  at: Date;
  until: Date;
}

/**
 * Quarantines an address unless it already is (a block met by another delivery from it, in
 * flight before the first quarantine was seen, changes nothing: the cool-down runs from the
 * first block). A quarantine that has run out but was not yet expired by the worker is expired
 * here first, so the event trail stays whole. Returns the new quarantine, or undefined.
 */
export async function quarantineAddress(sql: Sql, q: NewQuarantine): Promise<QuarantineRow | undefined> {
  return sql.begin(async (tx) => {
    await expireQuarantines(tx, q.at, q.address);
    // One statement: the quarantine and its event exist together or not at all.
    const [row] = await tx<QuarantineRow[]>`
      with q as (
        insert into ip_quarantines (address, pool, quarantined_at, quarantined_until, rule, event_id)
        values (${q.address}, ${q.pool}, ${q.at}, ${q.until}, ${q.rule}, nextval('ip_watchdog_events_id_seq'))
        on conflict (address) do nothing
        returning *
      ), e as (
        insert into ip_watchdog_events (id, occurred_at, kind, address, pool, rule, reply, destination, send_id, quarantined_until)
        select event_id, ${q.at}, 'quarantined', address, pool, rule, ${q.reply}, ${q.destination}, ${q.sendId}, quarantined_until from q
      )
      select address, pool, quarantined_at, quarantined_until, rule, event_id::text from q`;
    if (!row) return undefined;
    await writeAudit(tx, {
      tenantId: null,
      actor: SYSTEM,
      action: 'ip_watchdog.quarantine',
      resourceType: 'ip_address',
      resourceId: q.address,
      metadata: { pool: q.pool, rule: q.rule, reply: q.reply, destination: q.destination, send_id: q.sendId, until: q.until.toISOString() },
      at: q.at,
    });
    return row;
  });
}

/** Ends a quarantine in force at `at` early (an operator's release); undefined when the address was not quarantined. */
export async function releaseAddress(sql: Sql, address: string, at: Date, actor: AuditActor): Promise<QuarantineRow | undefined> {
  return sql.begin(async (tx) => {
    const [row] = await tx<QuarantineRow[]>`
      delete from ip_quarantines where address = ${address} and quarantined_until > ${at}
      returning address, pool, quarantined_at, quarantined_until, rule, event_id::text`;
    if (!row) return undefined;
    await tx`
      insert into ip_watchdog_events (occurred_at, kind, address, pool, rule, quarantined_until, actor_id)
      values (${at}, 'released', ${address}, ${row.pool}, ${row.rule}, ${row.quarantined_until}, ${actor.id})`;
    await writeAudit(tx, {
      tenantId: null,
      actor,
      action: 'ip_watchdog.release',
      resourceType: 'ip_address',
      resourceId: address,
      metadata: { pool: row.pool, rule: row.rule, quarantined_at: row.quarantined_at.toISOString(), quarantined_until: row.quarantined_until.toISOString() },
      at,
    });
    return row;
  });
}

/**
 * Removes the quarantines whose cool-down has ended by `at` (of one address, or all), each with
 * an 'expired' event dated when it ended and an audit row. Returns what expired.
 */
export async function expireQuarantines(tx: Queryable, at: Date, address?: string): Promise<QuarantineRow[]> {
  const gone = await tx<QuarantineRow[]>`
    with gone as (
      delete from ip_quarantines
      where quarantined_until <= ${at} ${address === undefined ? tx`` : tx`and address = ${address}`}
      returning *
    ), e as (
      insert into ip_watchdog_events (occurred_at, kind, address, pool, rule, quarantined_until)
      select quarantined_until, 'expired', address, pool, rule, quarantined_until from gone
    )
    select address, pool, quarantined_at, quarantined_until, rule, event_id::text from gone order by quarantined_until, address`;
  for (const row of gone) {
    await writeAudit(tx, {
      tenantId: null,
      actor: SYSTEM,
      action: 'ip_watchdog.expire',
      resourceType: 'ip_address',
      resourceId: row.address,
      metadata: { pool: row.pool, rule: row.rule, quarantined_at: row.quarantined_at.toISOString() },
      at: row.quarantined_until,
    });
  }
  return gone;
}

/** Quarantines in force at `at`. */
export async function activeQuarantines(db: Queryable, at: Date): Promise<QuarantineRow[]> {
  return db<QuarantineRow[]>`
    select address, pool, quarantined_at, quarantined_until, rule, event_id::text
    from ip_quarantines where quarantined_until > ${at}`;
}

const EVENT_COLUMNS = (db: Queryable) => db`id::text, occurred_at, kind, address, pool, rule, reply, destination, send_id, quarantined_until, actor_id`;

/** The last `limit` events, newest first. */
export async function recentWatchdogEvents(db: Queryable, limit: number): Promise<WatchdogEventRow[]> {
  return db<WatchdogEventRow[]>`select ${EVENT_COLUMNS(db)} from ip_watchdog_events order by id desc limit ${limit}`;
}

/** The latest event of each of `addresses` that has one. */
export async function latestWatchdogEvents(db: Queryable, addresses: string[]): Promise<Map<string, WatchdogEventRow>> {
  if (addresses.length === 0) return new Map();
  const rows = await db<WatchdogEventRow[]>`
    select distinct on (address) ${EVENT_COLUMNS(db)}
    from ip_watchdog_events where address = any(${addresses}::text[])
    order by address, id desc`;
  return new Map(rows.map((r) => [r.address, r]));
}

/** A sending domain's name (pools may be assigned by domain). */
export async function domainName(db: Queryable, domainId: string): Promise<string | undefined> {
  const [row] = await db<{ name: string }[]>`select name from domains where id = ${domainId}`;
  return row?.name;
}
