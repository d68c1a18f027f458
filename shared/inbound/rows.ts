// The rows one received message writes (queries.ts inserts them; the webhook outbox reads the message and its recipients).
export interface InboundMessageRow {
  id: string;
  received_at: Date;
  remote_address: string;
  helo: string | null;
  tls: boolean;
  mail_from: string;
  size_bytes: number;
  raw: Buffer;
  authentication_results: string | null;
  header_message_id: string | null;
  header_from: string | null;
  subject: string | null;
}

export interface InboundRecipientRow {
  id: string;
  message_id: string;
  recipient: string;
  kind: 'tenant' | 'bounce' | 'unsubscribe';
  tenant_id: string | null;
  created_at: Date;
}

export interface MailboxMessageRow {
  id: string;
  tenant_id: string;
  mailbox_id: string;
  inbound_message_id: string;
  recipient: string;
  header_from: string | null;
  subject: string | null;
  received_at: Date;
}

export interface WebhookDeliveryRow {
  id: string;
  tenant_id: string;
  inbound_recipient_id: string;
  next_attempt_at: Date;
  created_at: Date;
}
