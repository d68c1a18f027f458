// Builds the RFC 5322 message of an outbound send with nodemailer's composer (Message-ID at our host, Date, multipart/alternative).
import MailComposer from 'nodemailer/lib/mail-composer';

export interface OutboundAttachment {
  filename: string;
  content: Buffer;
  contentType?: string;
}

export interface OutboundContent {
  from: { address: string; name?: string };
  to: string;
  replyTo?: string;
  subject: string;
  text?: string;
  html?: string;
  /** Extra headers the sender asked for (already checked: no CR/LF, no reserved names). */
  headers?: Record<string, string>;
  attachments?: OutboundAttachment[];
  /** Message-ID without angle brackets, e.g. "<uuid>@mx.mailpath.local". */
  messageId: string;
  date: Date;
}

/** The message bytes, CRLF line ends, ready to be DKIM-signed. */
export function composeMessage(c: OutboundContent): Promise<Buffer> {
  const mail = new MailComposer({
    from: c.from.name ? { name: c.from.name, address: c.from.address } : c.from.address,
    to: c.to,
    ...(c.replyTo ? { replyTo: c.replyTo } : {}),
    subject: c.subject,
    ...(c.text !== undefined ? { text: c.text } : {}),
    ...(c.html !== undefined ? { html: c.html } : {}),
    ...(c.headers ? { headers: c.headers } : {}),
    ...(c.attachments ? { attachments: c.attachments } : {}),
    messageId: `<${c.messageId}>`,
    date: c.date,
    // Our own envelope is set at delivery; the composer must not invent one from the headers.
    envelope: { from: c.from.address, to: [c.to] },
  }).compile();
  mail.keepBcc = false;
  return new Promise((resolve, reject) => mail.build((err, message) => (err ? reject(err) : resolve(message))));
}
