// What the dev sink caught and what the dev webhook receiver was sent, kept in memory while `mailpath dev` runs (the newest ones only).
import { simpleParser } from '../../shared/kernel/mail-parser.js';

export interface HeaderSummary {
  from: string | null;
  to: string | null;
  subject: string | null;
  message_id: string | null;
}

export interface CaughtMessage extends HeaderSummary {
  id: number;
  received_at: Date;
  /** The SMTP envelope the sink was given. */
  mail_from: string;
  rcpt_to: string[];
  raw: Buffer;
  /** The sink's own check of the message, through the dev DNS: e.g. "pass (d=acme.localhost s=mp20261121)". */
  dkim: string;
  dmarc: string;
}

export interface ReceivedPost extends Partial<HeaderSummary> {
  id: number;
  received_at: Date;
  path: string;
  content_type: string | null;
  /**
   * The request's X-MP-* headers (tenant, recipient, delivery, attempt, signature) and an event webhook's webhook-id, webhook-timestamp and webhook-signature,
   * names lower-cased.
   */
  mailpath_headers: Record<string, string>;
  body: Buffer;
}

/** How many of each are kept: enough to watch a session, bounded so a loop cannot fill the memory. */
export const KEEP = 1000;

export class DevStore {
  readonly messages: CaughtMessage[] = [];
  readonly posts: ReceivedPost[] = [];
  private nextMessage = 1;
  private nextPost = 1;

  /** Messages caught since dev mode started, those no longer kept included (a campaign of thousands counts whole). */
  get caughtTotal(): number {
    return this.nextMessage - 1;
  }

  addMessage(m: Omit<CaughtMessage, 'id'>): CaughtMessage {
    const stored = { id: this.nextMessage++, ...m };
    this.messages.push(stored);
    if (this.messages.length > KEEP) this.messages.shift();
    return stored;
  }

  addPost(p: Omit<ReceivedPost, 'id'>): ReceivedPost {
    const stored = { id: this.nextPost++, ...p };
    this.posts.push(stored);
    if (this.posts.length > KEEP) this.posts.shift();
    return stored;
  }
}

/** From, To, Subject and Message-ID of a message, for the listings (null when absent or unreadable). */
export async function summarize(raw: Buffer): Promise<HeaderSummary> {
  try {
    const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true, skipTextLinks: true });
    const text = (a: { text: string } | { text: string }[] | undefined) =>
      a === undefined ? null : Array.isArray(a) ? a.map((x) => x.text).join(', ') : a.text;
    return { from: text(parsed.from), to: text(parsed.to), subject: parsed.subject ?? null, message_id: parsed.messageId ?? null };
  } catch {
    return { from: null, to: null, subject: null, message_id: null };
  }
}
