// One signed inbound-webhook POST (real deliveries and test-send alike): the X-MP-Inbound-* headers, carried by jobs/webhook-post.ts.
import { SIGNATURE_HEADER, signBody } from '../../shared/webhooks/inbound/secret.js';
import type { PostDeps, PostResult } from '../../shared/webhooks/post.js';
import { postSigned } from '../webhook-post.js';

export type { PostDeps, PostResult };

export interface WebhookPost {
  url: string;
  secret: string;
  tenantId: string;
  /** The envelope recipient (X-MP-Inbound-Recipient). */
  recipient: string;
  /** Sent as X-MP-Inbound-Delivery: the same for every attempt of one delivery, so receivers can drop repeats. */
  deliveryId: string;
  attempt: number;
  body: Buffer;
  /** A test-send: marked with X-MP-Inbound-Test so receivers can tell it from real mail. */
  test?: boolean;
}

/** Header values are bytes on the wire: a non-ASCII address goes as an RFC 8187 ext-value (UTF-8''percent-encoded). */
function headerValue(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : `UTF-8''${encodeURIComponent(text)}`;
}

/** The request headers of a webhook POST, signature included. */
export function webhookHeaders(post: WebhookPost): Record<string, string> {
  return {
    'content-type': 'message/rfc822',
    'user-agent': 'Mailpath-Inbound-Webhook/1',
    [SIGNATURE_HEADER]: signBody(post.body, post.secret),
    'x-mp-inbound-tenant': post.tenantId,
    'x-mp-inbound-recipient': headerValue(post.recipient),
    'x-mp-inbound-delivery': post.deliveryId,
    'x-mp-inbound-attempt': String(post.attempt),
    ...(post.test ? { 'x-mp-inbound-test': 'true' } : {}),
  };
}

/** Signs and POSTs the message once (jobs/webhook-post.ts carries it); what follows is decided by the retry schedule. */
export function postToWebhook(deps: PostDeps, post: WebhookPost): Promise<PostResult> {
  return postSigned(deps, { url: post.url, headers: webhookHeaders(post), body: post.body });
}
