// Stores received messages durably: the message, its recipients, mailbox copies, webhook deliveries and follow-up jobs, in one transaction shared by
// concurrent messages.
import { randomUUID } from 'node:crypto';
import type { Queryable, Sql } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import type { Logger } from '../kernel/log.js';
import type { Boss } from '../jobs/boss.js';
import type { HeaderSummary } from './headers.js';
import { enqueueInboundJobs, type InboundBounceJob, type InboundUnsubscribeJob } from './jobs.js';
import { insertReceived, storedMessageIds } from './queries.js';
import type { InboundMessageRow, InboundRecipientRow, MailboxMessageRow, WebhookDeliveryRow } from './rows.js';

/**
 * Where a recipient's copy goes: a tenant (its mailbox and/or its webhook), our bounce processing, or a
 * mailto unsubscribe. Bounce mail fetched from a tenant's own bounce mailbox names that tenant: its
 * reports may only be about the tenant's own sends.
 */
export type RecipientTarget =
  | { kind: 'tenant'; tenantId: string; mailboxId: string | null; webhook: boolean }
  | { kind: 'bounce'; tenantId?: string }
  | { kind: 'unsubscribe' };

export interface ReceivedMail {
  id: string;
  receivedAt: Date;
  remoteAddress: string;
  helo: string | null;
  tls: boolean;
  /** '' for the null sender. */
  mailFrom: string;
  /** What is stored and handed on: our Received and Authentication-Results headers, then the client's bytes. */
  raw: Buffer;
  authenticationResults: string | null;
  headers: HeaderSummary;
  recipients: { address: string; target: RecipientTarget }[];
}

export interface StoredMail {
  id: string;
  /** inbound_recipients ids, in the order of `recipients`. */
  recipientIds: string[];
  mailboxCopies: number;
  webhookDeliveries: number;
  bounceJobs: number;
  unsubscribeJobs: number;
}

/** One message's rows and jobs, ids chosen before the first commit so a retry writes the same ones. */
interface Planned {
  message: InboundMessageRow;
  recipients: InboundRecipientRow[];
  mailboxMessages: MailboxMessageRow[];
  deliveries: WebhookDeliveryRow[];
  bounceJobs: InboundBounceJob[];
  unsubscribeJobs: InboundUnsubscribeJob[];
}

export class InboundStore {
  private readonly group: GroupCommit<Planned, StoredMail>;

  /**
   * One group commit: while a transaction commits the next messages gather into the next batch.
   * (Several commits at once were measured to cost more: smaller batches, more round trips each.)
   */
  constructor(sql: Sql, boss: Boss, log: Logger, maxBatch: number) {
    this.group = new GroupCommit<Planned, StoredMail>(
      (items, retry) =>
        sql.begin(async (tx) => {
          // Committed alone after its batch failed: the batch's COMMIT may have gone through with
          // its reply lost; then the rows are there and nothing is written twice.
          const stored = retry
            ? new Set(
                await storedMessageIds(
                  tx,
                  items.map((i) => i.message.id),
                ),
              )
            : new Set<string>();
          const fresh = items.filter((i) => !stored.has(i.message.id));
          // Both statements are sent at once (postgres.js pipelines them on the transaction's connection).
          await Promise.all([
            insertReceived(tx, {
              messages: fresh.map((i) => i.message),
              recipients: fresh.flatMap((i) => i.recipients),
              mailboxMessages: fresh.flatMap((i) => i.mailboxMessages),
              deliveries: fresh.flatMap((i) => i.deliveries),
            }),
            enqueueInboundJobs(boss, tx, { bounce: fresh.flatMap((i) => i.bounceJobs), unsubscribe: fresh.flatMap((i) => i.unsubscribeJobs) }),
          ]);
          return items.map(summary);
        }),
      log,
      'received messages',
      maxBatch,
    );
  }

  /** Resolves once the message and its follow-up jobs are committed; rejects when nothing was stored. */
  store(mail: ReceivedMail): Promise<StoredMail> {
    return this.group.write(plan(mail));
  }
}

/**
 * Stores one message and enqueues its follow-up jobs inside `tx`, for a caller that writes more in the
 * same transaction (the POP3 poller marks the message's UIDL fetched with it).
 */
export async function storeReceivedIn(tx: Queryable, boss: Boss, mail: ReceivedMail): Promise<StoredMail> {
  const p = plan(mail);
  await insertReceived(tx, { messages: [p.message], recipients: p.recipients, mailboxMessages: p.mailboxMessages, deliveries: p.deliveries });
  await enqueueInboundJobs(boss, tx, { bounce: p.bounceJobs, unsubscribe: p.unsubscribeJobs });
  return summary(p);
}

function plan(mail: ReceivedMail): Planned {
  const at = mail.receivedAt;
  const planned: Planned = {
    message: {
      id: mail.id,
      received_at: at,
      remote_address: mail.remoteAddress,
      helo: mail.helo,
      tls: mail.tls,
      mail_from: mail.mailFrom,
      size_bytes: mail.raw.length,
      raw: mail.raw,
      authentication_results: mail.authenticationResults,
      header_message_id: mail.headers.messageId,
      header_from: mail.headers.from,
      subject: mail.headers.subject,
    },
    recipients: [],
    mailboxMessages: [],
    deliveries: [],
    bounceJobs: [],
    unsubscribeJobs: [],
  };
  for (const { address, target } of mail.recipients) {
    const recipientId = randomUUID();
    planned.recipients.push({
      id: recipientId,
      message_id: mail.id,
      recipient: address,
      kind: target.kind,
      tenant_id: target.kind === 'unsubscribe' ? null : (target.tenantId ?? null),
      created_at: at,
    });
    if (target.kind === 'bounce') {
      planned.bounceJobs.push({ recipient_id: recipientId });
      continue;
    }
    if (target.kind === 'unsubscribe') {
      planned.unsubscribeJobs.push({ recipient_id: recipientId });
      continue;
    }
    if (target.mailboxId !== null) {
      planned.mailboxMessages.push({
        id: randomUUID(),
        tenant_id: target.tenantId,
        mailbox_id: target.mailboxId,
        inbound_message_id: mail.id,
        recipient: address,
        header_from: mail.headers.from,
        subject: mail.headers.subject,
        received_at: at,
      });
    }
    if (target.webhook) {
      planned.deliveries.push({ id: randomUUID(), tenant_id: target.tenantId, inbound_recipient_id: recipientId, next_attempt_at: at, created_at: at });
    }
  }
  return planned;
}

function summary(p: Planned): StoredMail {
  return {
    id: p.message.id,
    recipientIds: p.recipients.map((r) => r.id),
    mailboxCopies: p.mailboxMessages.length,
    webhookDeliveries: p.deliveries.length,
    bounceJobs: p.bounceJobs.length,
    unsubscribeJobs: p.unsubscribeJobs.length,
  };
}
