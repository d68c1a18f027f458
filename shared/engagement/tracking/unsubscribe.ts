// The bulk-sender unsubscribe headers of one send (RFC 2369 List-Unsubscribe with an https link and a mailto address, RFC 8058 one-click), and the link a
// body may show.
import { linkBase, TRACKING_PATHS, UNSUBSCRIBE_LOCAL_PREFIX, unsubscribeToken } from './link-tokens.js';

export interface UnsubscribeInput {
  /** The send the message will be (acceptSend's caller-fixed sendId). */
  sendId: string;
  /** deps.linkKey. */
  linkKey: Buffer;
  /** MAILPATH_PUBLIC_URL: the https link's origin. */
  publicUrl: URL;
  /** MAILPATH_HOSTNAME: the mailto address's domain (the MX takes mail for it). */
  hostname: string;
}

/** The send's unsubscribe link and headers, from one token: the link for a body's "unsubscribe", the headers for the message. */
export function unsubscribeOf(input: UnsubscribeInput): { url: string; headers: Record<string, string> } {
  const token = unsubscribeToken(input.linkKey, input.sendId);
  const url = `${linkBase(input.publicUrl)}${TRACKING_PATHS.unsubscribe}${token}`;
  return {
    url,
    headers: {
      'List-Unsubscribe': `<${url}>, <mailto:${UNSUBSCRIBE_LOCAL_PREFIX}${token}@${input.hostname}>`,
      'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
    },
  };
}

/**
 * `List-Unsubscribe: <https://…/u/<token>>, <mailto:u-<token>@host>` and
 * `List-Unsubscribe-Post: List-Unsubscribe=One-Click`. Both are in the DKIM signature's header list
 * (shared/sending/dkim.ts), as RFC 8058 requires for one-click. Either way has the same effect: the
 * contact is unsubscribed (a send without a contact: its address is suppressed).
 */
export function unsubscribeHeaders(input: UnsubscribeInput): Record<string, string> {
  return unsubscribeOf(input).headers;
}

/** The https unsubscribe link of the send, for a body's "unsubscribe" link (decorateHtml leaves it untracked). */
export function unsubscribeLink(input: Omit<UnsubscribeInput, 'hostname'>): string {
  return unsubscribeOf({ ...input, hostname: '' }).url;
}
