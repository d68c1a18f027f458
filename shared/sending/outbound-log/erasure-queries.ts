// SQL that takes an erased person's address out of a tenant's message log: sends, their attempts, events, bounce reports and campaign recipients.
import type { Queryable } from '../../db/connection.js';

/** A case-insensitive PostgreSQL regular expression matching the address literally (every non-alphanumeric escaped). */
export function literalPattern(email: string): string {
  return email.replace(/[^a-z0-9]/gi, (c) => `\\${c}`);
}

/**
 * Replaces the address with `placeholder` in the tenant's sends (recipient; the message bytes and the
 * subject are dropped, a reply quoting the address rewritten), their delivery attempts and bounce reports,
 * the recipients of its campaigns, and the tenant's events (recipient and any mention in detail). A send still waiting (queued or deferred)
 * is dropped: there is nothing left to deliver. Answers how many sends and events were rewritten.
 */
export async function scrubRecipient(
  db: Queryable,
  tenantId: string,
  email: string,
  placeholder: string,
  at: Date,
): Promise<{ sends: number; events: number }> {
  const pattern = literalPattern(email);
  const sends = await db<{ id: string }[]>`
    update sends set
      to_email = ${placeholder},
      subject = '(erased)',
      message = null,
      status = case when status in ('queued', 'deferred') then 'dropped' else status end,
      status_detail = case when status in ('queued', 'deferred') then 'dropped: the recipient was erased'
                           else regexp_replace(status_detail, ${pattern}, ${placeholder}, 'gi') end,
      defer_until = case when status in ('queued', 'deferred') then null else defer_until end,
      updated_at = ${at}
    where tenant_id = ${tenantId} and to_email = ${email}
    returning id`;
  const ids = sends.map((s) => s.id);
  if (ids.length > 0) {
    await db`
      update send_attempts set reply = regexp_replace(reply, ${pattern}, ${placeholder}, 'gi')
      where send_id = any(${ids}::uuid[]) and reply ~* ${pattern}`;
    await db`
      update bounce_reports set detail = regexp_replace(detail::text, ${pattern}, ${placeholder}, 'gi')::jsonb
      where send_id = any(${ids}::uuid[]) and detail::text ~* ${pattern}`;
  }
  // A campaign's recipients keep the address they were sent to: found through the person's contact, campaign by
  // campaign (the primary key), since the address itself is not indexed there.
  await db`
    update campaign_recipients set email = ${placeholder}
    where campaign_id in (select id from campaigns where tenant_id = ${tenantId})
      and contact_id in (select id from contacts where tenant_id = ${tenantId} and email_hash = sha256(convert_to(${email}, 'UTF8')))`;
  const events = await db`
    update events set recipient = ${placeholder}, detail = regexp_replace(detail::text, ${pattern}, ${placeholder}, 'gi')::jsonb
    where tenant_id = ${tenantId} and (recipient = ${email} or send_id = any(${ids}::uuid[]))`;
  return { sends: ids.length, events: events.count };
}
