// Judges where a received seed copy landed (inbox or spam) from its header block, finds which copy it is (Message-ID, else Feedback-ID), and records it: for
// the MX and for the POP3 poller.
import type { Queryable } from '../../db/connection.js';
import { firstFields } from '../../inbound/headers.js';
import { activeSeedsByEmail, recordPlacement, seedsOfMailbox, type Placement } from './queries.js';

const FIELDS = new Set([
  'message-id',
  'feedback-id',
  'x-spam-flag',
  'x-spam-status',
  'authentication-results',
  'x-folder',
  'x-mailpath-folder',
  'x-gmail-labels',
]);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SPAM_FOLDER = /\b(spam|junk|bulk)\b/i;

/**
 * The spam markers (docs/deliverability.md, "Seed mailboxes"), any one of which makes a copy spam:
 * - X-Spam-Flag: YES, or X-Spam-Status beginning with Yes (SpamAssassin's and most filters' verdict fields);
 * - the first Authentication-Results field (the MX's own, put above the message's) saying dmarc=fail: mail that
 *   fails DMARC is what receiving providers junk or refuse;
 * - a folder marker, for copies fetched over POP3 (which has no folders): X-Folder or X-Mailpath-Folder naming
 *   Spam, Junk or Bulk (what a forwarding rule or a provider's POP export adds), or X-Gmail-Labels holding Spam.
 * Anything else is inbox.
 */
export function judgePlacement(fields: Map<string, string>): Placement {
  const value = (name: string) => fields.get(name)?.trim() ?? '';
  if (/^yes\b/i.test(value('x-spam-flag')) || /^yes\b/i.test(value('x-spam-status'))) return 'spam';
  if (/\bdmarc=fail\b/i.test(value('authentication-results'))) return 'spam';
  if (SPAM_FOLDER.test(value('x-folder')) || SPAM_FOLDER.test(value('x-mailpath-folder')) || /\bspam\b/i.test(value('x-gmail-labels'))) return 'spam';
  return 'inbox';
}

/**
 * Which copy a message is: the send id of a Message-ID <uuid@host> (every campaign message's, the copy's own send
 * id), and the campaign of its Feedback-ID (`<campaign>:<tenant>:campaign:mailpath`) for a copy whose Message-ID a
 * forwarder replaced.
 */
export function copyOf(fields: Map<string, string>): { sendId: string | null; campaignId: string | null } {
  const messageId = (fields.get('message-id') ?? '').trim().replace(/^<|>$/g, '');
  const local = messageId.slice(0, messageId.indexOf('@'));
  const feedback = (fields.get('feedback-id') ?? '').trim().split(':');
  const campaign = feedback.length === 4 && feedback[2] === 'campaign' && feedback[3] === 'mailpath' ? feedback[0]! : '';
  return { sendId: UUID.test(local) ? local.toLowerCase() : null, campaignId: UUID.test(campaign) ? campaign.toLowerCase() : null };
}

export interface Observed {
  placement: Placement;
  hitIds: string[];
}

/**
 * The MX: a message to `recipients` (addresses as accepted, lower-cased) whose header block is `head` (our own
 * fields first, then the message's). When any of them is an active seed and the message is one of its copies,
 * the copy's placement is recorded. Costs one indexed look-up for mail to no seed.
 */
export async function observeAtMx(db: Queryable, recipients: readonly string[], head: Buffer, at: Date): Promise<Observed | null> {
  const seeds = await activeSeedsByEmail(db, recipients);
  if (seeds.length === 0) return null;
  const fields = firstFields(head, FIELDS);
  const placement = judgePlacement(fields);
  // By Message-ID only: our own MX receives the copy as sent, and the Feedback-ID names the campaign in every
  // recipient's copy, so any recipient could forge a placement with it ahead of the real copy.
  const { sendId } = copyOf(fields);
  const hitIds = await recordPlacement(db, { seedIds: seeds.map((s) => s.id), sendId, campaignId: null, placement, source: 'mx', at });
  return { placement, hitIds };
}

/** The POP3 poller: a message fetched from a bounce mailbox that seeds name as theirs. */
export async function observeInMailbox(db: Queryable, mailboxId: string, raw: Buffer, at: Date): Promise<Observed | null> {
  const seedIds = await seedsOfMailbox(db, mailboxId);
  if (seedIds.length === 0) return null;
  const fields = firstFields(raw, FIELDS);
  const placement = judgePlacement(fields);
  const hitIds = await recordPlacement(db, { seedIds, ...copyOf(fields), placement, source: 'pop3', at });
  return { placement, hitIds };
}
