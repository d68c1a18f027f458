// Test fixture: inbound mail as the MX stores it (one inbound_messages row with our trace headers on top, a mailbox_messages row per mailbox recipient).
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import MailComposer from 'nodemailer/lib/mail-composer';
import type { Queryable } from '../../shared/db/connection.js';
import { call } from './app.js';

export interface ComposeOptions {
  from?: string;
  to?: string;
  cc?: string;
  subject?: string;
  text?: string;
  html?: string;
  /** An attachment is added unless false. */
  attachment?: { filename: string; content: Buffer; contentType: string; cid?: string } | false;
  messageId?: string;
  date?: Date;
}

/** A real multipart message: text and HTML alternatives, an inline image and a PDF attachment, CRLF line ends. */
export function composeInbound(o: ComposeOptions = {}): Promise<Buffer> {
  const attachments =
    o.attachment === false
      ? []
      : [
          o.attachment ?? { filename: 'report.pdf', content: Buffer.from('%PDF-1.4 test document\n'), contentType: 'application/pdf' },
          { filename: 'logo.png', content: Buffer.from('89504e470d0a1a0a', 'hex'), contentType: 'image/png', cid: 'logo@example.org' },
        ];
  return new MailComposer({
    from: o.from ?? 'Alice Sender <alice@sender.example>',
    to: o.to ?? 'inbox@acme.example',
    ...(o.cc ? { cc: o.cc } : {}),
    subject: o.subject ?? 'Quarterly report',
    text: o.text ?? 'Hello,\r\nthe report is attached.\r\n',
    html: o.html ?? '<p>Hello,</p><p>the report is attached. <img src="cid:logo@example.org"></p>',
    attachments,
    messageId: o.messageId ?? `<${randomUUID()}@sender.example>`,
    date: o.date ?? new Date('2026-03-02T10:00:00Z'),
  })
    .compile()
    .build();
}

export interface StoreOptions {
  tenantId: string;
  mailboxId: string;
  /** The envelope recipient (the mailbox address). */
  recipient: string;
  raw: Buffer;
  from?: string | null;
  subject?: string | null;
  receivedAt?: Date;
  seen?: boolean;
  authResults?: string;
}

/** Prepends Received and Authentication-Results as the MX does, stores the message once and files it in the mailbox. */
export async function storeInbound(db: Queryable, o: StoreOptions): Promise<{ messageId: string; inboundId: string; raw: Buffer }> {
  const at = o.receivedAt ?? new Date();
  const auth = o.authResults ?? 'mx.mailpath.test; spf=pass smtp.mailfrom=sender.example; dkim=none; dmarc=none header.from=sender.example';
  const trace =
    `Received: from mail.sender.example (mail.sender.example [192.0.2.10])\r\n\tby mx.mailpath.test with ESMTP; ${at.toUTCString()}\r\n` +
    `Authentication-Results: ${auth}\r\n`;
  const raw = Buffer.concat([Buffer.from(trace), o.raw]);
  const inboundId = randomUUID();
  await db`
    insert into inbound_messages (id, received_at, remote_address, helo, tls, mail_from, size_bytes, raw, authentication_results, header_message_id,
                                  header_from, subject)
    values (${inboundId}, ${at}, '192.0.2.10', 'mail.sender.example', true, 'bounce@sender.example', ${raw.length}, ${raw}, ${auth},
            null, ${o.from === undefined ? 'Alice Sender <alice@sender.example>' : o.from}, ${o.subject === undefined ? 'Quarterly report' : o.subject})`;
  const messageId = randomUUID();
  await db`
    insert into mailbox_messages (id, tenant_id, mailbox_id, inbound_message_id, recipient, header_from, subject, seen, received_at)
    values (${messageId}, ${o.tenantId}, ${o.mailboxId}, ${inboundId}, ${o.recipient},
            ${o.from === undefined ? 'Alice Sender <alice@sender.example>' : o.from}, ${o.subject === undefined ? 'Quarterly report' : o.subject},
            ${o.seen ?? false}, ${at})`;
  return { messageId, inboundId, raw };
}

/** Composes a message with these From/Subject and stores it for the mailbox. */
export async function deliverToMailbox(
  db: Queryable,
  mailbox: { tenantId: string; id: string; address: string },
  o: ComposeOptions & { receivedAt?: Date; seen?: boolean } = {},
): Promise<{ messageId: string; raw: Buffer }> {
  const from = o.from ?? 'Alice Sender <alice@sender.example>';
  const subject = o.subject ?? 'Quarterly report';
  const raw = await composeInbound({ ...o, from, subject, to: o.to ?? mailbox.address });
  return storeInbound(db, {
    tenantId: mailbox.tenantId,
    mailboxId: mailbox.id,
    recipient: mailbox.address,
    raw,
    from,
    subject,
    ...(o.receivedAt ? { receivedAt: o.receivedAt } : {}),
    ...(o.seen !== undefined ? { seen: o.seen } : {}),
  });
}

/** A verified domain of the tenant (fixture row, no DNS), named uniquely: mailbox addresses must be at one. */
export async function verifiedMailDomain(db: Queryable, tenantId: string): Promise<string> {
  const name = `${randomUUID().slice(0, 8)}.mail.example`;
  await db`insert into domains (tenant_id, name, unicode_name, owned_at, verified_at, created_at) values (${tenantId}, ${name}, ${name}, now(), now(), now())`;
  return name;
}

export interface TestMailbox {
  id: string;
  tenantId: string;
  address: string;
}

/** Creates a mailbox through the API (201 expected). */
export async function createTestMailbox(app: FastifyInstance, token: string, tenantId: string, address: string): Promise<TestMailbox> {
  const res = await call(app, 'POST', '/mail/mailboxes', { token, body: { address } });
  if (res.status !== 201) throw new Error(`create mailbox: ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, tenantId, address: res.body.data.address };
}

/** Invites and consumes through the API; returns the mailbox session token. */
export async function mailboxSession(app: FastifyInstance, ownerToken: string, mailboxId: string, password = 'Mailbox-pass-42'): Promise<string> {
  const invite = await call(app, 'POST', `/mail/mailboxes/${mailboxId}/invite`, { token: ownerToken });
  if (invite.status !== 201) throw new Error(`invite: ${invite.status} ${JSON.stringify(invite.body)}`);
  const res = await call(app, 'POST', '/auth/mail/invite/consume', { body: { token: invite.body.data.token, new_password: password } });
  if (res.status !== 200) throw new Error(`consume: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data.token;
}
