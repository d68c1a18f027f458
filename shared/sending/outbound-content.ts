// What an outbound message is built from: compose.ts builds it, simple-message.ts the common shape in one pass (both need the type, neither the other's code
// for it).
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
