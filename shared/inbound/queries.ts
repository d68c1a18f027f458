// SQL of inbound mail at reception: whose a recipient address is, and the rows one received message writes.
import type { Queryable } from '../db/connection.js';
import { enqueueInboundEvents } from '../webhooks/events/outbox.js';
import type { InboundMessageRow, InboundRecipientRow, MailboxMessageRow, WebhookDeliveryRow } from './rows.js';

/** What the database knows about a recipient address: its domain's owner and MX state, a mailbox, the webhook. */
export interface RecipientFacts {
  /** The tenant whose claim owns the address's domain (proved control); null when none does. Pending claims receive nothing. */
  domainTenantId: string | null;
  /** The domain's MX record points at us (verified by the domain checks). */
  mxVerified: boolean;
  mailboxId: string | null;
  mailboxTenantId: string | null;
  /** The tenant's inbound webhook is enabled and has a URL (the mailbox's tenant, else the domain's). */
  webhookEnabled: boolean;
}

/**
 * The facts of each address, in order: one query of indexed look-ups (unique owned domain name, unique
 * mailbox address, primary keys) for any number of addresses, so the RCPTs of concurrent sessions
 * can share a round trip. Nothing is cached: a change is seen at the next RCPT.
 * Each address is lower-case with an A-label domain; `domain` is that domain.
 */
export async function recipientFacts(db: Queryable, addresses: { address: string; domain: string }[]): Promise<RecipientFacts[]> {
  if (addresses.length === 0) return [];
  const rows = await db<
    {
      i: string;
      domain_tenant_id: string | null;
      mx_verified: boolean;
      mailbox_id: string | null;
      mailbox_tenant_id: string | null;
      webhook_enabled: boolean;
    }[]
  >`
    select q.i,
           d.tenant_id as domain_tenant_id,
           coalesce(r.verified, false) as mx_verified,
           m.id as mailbox_id,
           m.tenant_id as mailbox_tenant_id,
           coalesce(w.enabled and w.webhook_url is not null, false) as webhook_enabled
      from unnest(${addresses.map((a) => a.address)}::text[], ${addresses.map((a) => a.domain)}::text[]) with ordinality as q (address, domain, i)
      left join domains d on d.name = q.domain and d.owned_at is not null
      left join domain_records r on r.domain_id = d.id and r.kind = 'mx'
      left join mailboxes m on m.address = q.address
      left join inbound_webhooks w on w.tenant_id = coalesce(m.tenant_id, d.tenant_id)
     order by q.i`;
  return rows.map((row) => ({
    domainTenantId: row.domain_tenant_id,
    mxVerified: row.mx_verified,
    mailboxId: row.mailbox_id,
    mailboxTenantId: row.mailbox_tenant_id,
    webhookEnabled: row.webhook_enabled,
  }));
}

/**
 * The rows of many received messages (the group commit) in one statement: each table's multi-row
 * insert is a data-modifying CTE, so a commit costs one round trip for all of them. Foreign keys
 * between them are checked at the end of the statement, when every row is there.
 */
export async function insertReceived(
  db: Queryable,
  rows: { messages: InboundMessageRow[]; recipients: InboundRecipientRow[]; mailboxMessages: MailboxMessageRow[]; deliveries: WebhookDeliveryRow[] },
): Promise<void> {
  const inserts = [];
  if (rows.messages.length > 0) inserts.push(db`m as (insert into inbound_messages ${db(rows.messages)})`);
  if (rows.recipients.length > 0) inserts.push(db`r as (insert into inbound_recipients ${db(rows.recipients)})`);
  if (rows.mailboxMessages.length > 0) inserts.push(db`b as (insert into mailbox_messages ${db(rows.mailboxMessages)})`);
  if (rows.deliveries.length > 0) {
    const deliveries = rows.deliveries.map((d) => ({ ...d, status: 'pending', attempts: 0 }));
    inserts.push(db`d as (insert into inbound_webhook_deliveries ${db(deliveries)})`);
  }
  if (inserts.length === 0) return;
  const ctes = inserts.reduce((all, next) => db`${all}, ${next}`);
  await db`with ${ctes} select 1`;
  await enqueueInboundEvents(db, rows);
}

/** The ids among `ids` that are stored already (a batch whose commit reply was lost). */
export async function storedMessageIds(db: Queryable, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db<{ id: string }[]>`select id from inbound_messages where id = any(${ids}::uuid[])`;
  return rows.map((r) => r.id);
}

/**
 * Deletes messages received before `before` that no workspace mailbox holds; their recipients and
 * webhook deliveries go with them (foreign keys cascade). Batched, so one run never holds a long lock.
 */
export async function purgeInboundMessages(db: Queryable, before: Date, batch = 1000): Promise<number> {
  let deleted = 0;
  for (;;) {
    const rows = await db`
      delete from inbound_messages where id in (
        select m.id from inbound_messages m
        where m.received_at < ${before}
          and not exists (select 1 from mailbox_messages mm where mm.inbound_message_id = m.id)
        limit ${batch})
      returning id`;
    deleted += rows.length;
    if (rows.length < batch) return deleted;
  }
}
