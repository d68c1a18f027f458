// What an event of the feed is: its types and row (queries.ts stores and reads them; the webhook outbox turns new ones into deliveries).
export const EVENT_TYPES = ['send', 'delivered', 'deferred', 'bounce', 'dropped', 'open', 'click', 'complaint', 'unsubscribe'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface EventRow {
  id: string;
  tenant_id: string;
  type: EventType;
  subtype: string | null;
  send_id: string | null;
  message_id: string | null;
  recipient: string;
  detail: Record<string, unknown>;
  occurred_at: Date;
  /** Events of campaign sends: the campaign and the contact. */
  campaign_id: string | null;
  contact_id: string | null;
}

/** A new event; the campaign columns may be left out (null). */
export type NewEvent = Omit<EventRow, 'id' | 'campaign_id' | 'contact_id'> & Partial<Pick<EventRow, 'campaign_id' | 'contact_id'>>;
