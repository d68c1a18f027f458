// best_send_hour: for each contact, the UTC hour with the most opens of the last 90 days (null without opens), set by a daily worker.
import type { Sql } from '../../db/connection.js';

export const BEST_SEND_HOUR_WINDOW_DAYS = 90;

export interface BestSendHourResult {
  /** Contacts whose hour was set or changed. */
  updated: number;
  /** Contacts whose opens all fell out of the window (back to null). */
  cleared: number;
}

/**
 * Recomputes best_send_hour for every contact in two statements: ties go to the earlier hour, and
 * opens flagged as machine opens (a mail provider's proxy fetching every image: events.detail.machine)
 * do not count, since they say nothing about when the person reads. Only rows whose value changes are
 * written, so a day without news costs a read.
 */
export async function refreshBestSendHours(sql: Sql, now: Date): Promise<BestSendHourResult> {
  const since = new Date(now.getTime() - BEST_SEND_HOUR_WINDOW_DAYS * 86_400_000);
  return sql.begin(async (tx) => {
    const updated = await tx`
      with opens as (
        select tenant_id, recipient, extract(hour from occurred_at at time zone 'UTC')::smallint as hour, count(*) as n
        from events
        where type = 'open' and occurred_at >= ${since} and occurred_at <= ${now}
          and coalesce((detail ->> 'machine')::boolean, false) = false
        group by 1, 2, 3
      ), best as (
        select distinct on (tenant_id, recipient) tenant_id, recipient, hour
        from opens order by tenant_id, recipient, n desc, hour
      )
      update contacts c set best_send_hour = b.hour
      from best b
      where c.tenant_id = b.tenant_id and c.email = b.recipient and c.best_send_hour is distinct from b.hour`;
    const cleared = await tx`
      update contacts c set best_send_hour = null
      where c.best_send_hour is not null and not exists (
        select 1 from events e
        where e.tenant_id = c.tenant_id and e.recipient = c.email and e.type = 'open'
          and e.occurred_at >= ${since} and e.occurred_at <= ${now}
          and coalesce((e.detail ->> 'machine')::boolean, false) = false)`;
    return { updated: updated.count, cleared: cleared.count };
  });
}
