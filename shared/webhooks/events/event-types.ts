// The event types a tenant can subscribe an endpoint to, and how each feed event (events.type) and inbound message becomes the JSON POSTed.
import type { EventType, NewEvent } from '../../engagement/events/event.js';

export const WEBHOOK_EVENT_TYPES = ['sent', 'delivered', 'deferred', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed', 'inbound'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** The feed's event types as webhooks name them; 'dropped' (a send the gates stopped) is not offered. */
const FEED_TYPES: Partial<Record<EventType, WebhookEventType>> = {
  send: 'sent',
  delivered: 'delivered',
  deferred: 'deferred',
  bounce: 'bounced',
  complaint: 'complained',
  open: 'opened',
  click: 'clicked',
  unsubscribe: 'unsubscribed',
};

/** The body of a webhook POST, in the Standard Webhooks shape: { type, timestamp, data }. */
export interface WebhookPayload {
  type: WebhookEventType | 'test';
  timestamp: string;
  data: Record<string, unknown>;
}

/** One event to fan out to a tenant's endpoints: its id is the de-duplication key of the outbox. */
export interface OutboxEvent {
  id: string;
  tenant_id: string;
  type: WebhookEventType;
  payload: WebhookPayload;
  at: Date;
}

/** A feed event as the webhook carries it, or undefined for a type no endpoint can subscribe to. */
export function feedEventToOutbox(e: NewEvent & { id: string }): OutboxEvent | undefined {
  const type = FEED_TYPES[e.type];
  if (!type) return undefined;
  return {
    id: e.id,
    tenant_id: e.tenant_id,
    type,
    at: e.occurred_at,
    payload: {
      type,
      timestamp: e.occurred_at.toISOString(),
      data: {
        event_id: e.id,
        send_id: e.send_id,
        message_id: e.message_id,
        recipient: e.recipient,
        campaign_id: e.campaign_id ?? null,
        contact_id: e.contact_id ?? null,
        // bounce: hard | soft; null for the other types.
        subtype: e.subtype,
        detail: e.detail,
      },
    },
  };
}

/** A received message for an address of the tenant: the metadata only; the raw bytes go to the inbound webhook. */
export interface InboundEventFacts {
  recipient_id: string;
  tenant_id: string;
  recipient: string;
  inbound_message_id: string;
  mail_from: string;
  header_from: string | null;
  subject: string | null;
  header_message_id: string | null;
  received_at: Date;
}

export function inboundEventToOutbox(f: InboundEventFacts): OutboxEvent {
  return {
    id: f.recipient_id,
    tenant_id: f.tenant_id,
    type: 'inbound',
    at: f.received_at,
    payload: {
      type: 'inbound',
      timestamp: f.received_at.toISOString(),
      data: {
        event_id: f.recipient_id,
        inbound_message_id: f.inbound_message_id,
        recipient: f.recipient,
        mail_from: f.mail_from,
        from: f.header_from,
        subject: f.subject,
        message_id: f.header_message_id,
      },
    },
  };
}
