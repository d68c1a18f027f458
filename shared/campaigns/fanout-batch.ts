// Sends one claimed batch of a campaign: recipients whose send already exists are settled as they are, the rest are rendered and handed to the send use-case together, and the batch is settled in one statement.
import { AppError } from '../errors.js';
import { normalizeEmail } from '../email.js';
import { PROFILE_COLUMN_NAMES } from '../contacts/fields.js';
import { visibleCustomFields } from '../custom-fields/values.js';
import { acceptSend, isHeld, isRefused, type AcceptInput, type HoldingOutcome } from '../sending/accept.js';
import type { SendingDeps } from '../sending/deps.js';
import type { Refusal } from '../sending/gates/types.js';
import { composeCampaignContent, type CampaignRecipient, type PreparedContent } from './content.js';
import type { CampaignRow } from './queries.js';
import { existingSends, recipientContacts, settleRecipients, type ClaimedRecipient, type RecipientContact, type Settlement } from './recipient-queries.js';

/** What a run knows once, for all its batches. */
export interface BatchContext {
  campaign: CampaignRow;
  content: PreparedContent;
  tenant: AcceptInput['tenant'];
  mode: 'live' | 'test';
  /** Keys of the tenant's custom-field catalog: only these are shown to templates. */
  catalog: { key: string }[];
}

/** How a batch ended: the counts, and what stops the run (the warm-up cap, a refusal, a campaign-wide failure). */
export interface BatchResult {
  queued: number;
  skipped: number;
  released: number;
  /** The warm-up cap was reached: the first held send's retry instant. */
  heldUntil: Date | undefined;
  refusal: Refusal | undefined;
  /** The campaign cannot go on (no domain that may send for its From address): why. */
  failure: string | undefined;
}

/** An error that concerns the whole campaign, not one recipient: its From address can no longer send. */
function campaignWide(err: unknown): boolean {
  return err instanceof AppError && (err.slug === 'no_verified_domain' || (err.slug === 'validation_error' && err.message.startsWith('from_email')));
}

/** An error that concerns one recipient's message (its address, its render, its size): skipped as invalid. */
function recipientFault(err: unknown): boolean {
  return err instanceof AppError && (err.slug === 'validation_error' || err.slug === 'payload_too_large');
}

/**
 * One campaign message as the send use-case takes it (recipients and seed copies alike): the address normalized, the
 * content rendered for the recipient, the campaign's From and Reply-To; `campaign` ties the send to the campaign
 * (null for a seed copy, which stays outside its audience). A fault of this recipient's message (its address, its
 * render, its size) comes back as an AppError to skip it by; anything else is thrown.
 */
export function campaignSendInput(
  deps: SendingDeps,
  ctx: BatchContext,
  recipient: CampaignRecipient,
  campaign: AcceptInput['campaign'] | null,
): AcceptInput | AppError {
  const c = ctx.campaign;
  let to: string;
  let message: ReturnType<typeof composeCampaignContent>;
  try {
    to = normalizeEmail(recipient.email, 'to');
    const links = { key: deps.linkKey, publicUrl: deps.config.publicUrl, hostname: deps.config.hostname };
    message = composeCampaignContent({ content: ctx.content, campaign: c, links, recipient: { ...recipient, email: to } });
  } catch (err) {
    if (!recipientFault(err)) throw err;
    return err as AppError;
  }
  return {
    tenant: ctx.tenant,
    mode: ctx.mode,
    apiKeyId: null,
    source: 'campaign',
    sendId: recipient.sendId,
    ...(campaign ? { campaign } : {}),
    holdOnDefer: true,
    from: { address: c.from_email!, name: c.from_name ?? undefined },
    to,
    content: { kind: 'compose', subject: message.subject, html: message.html, text: message.text, replyTo: c.reply_to ?? undefined, headers: message.headers },
  };
}

const profileOf = (c: RecipientContact) => Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, c[k]]));

type Attempt = { recipient: ClaimedRecipient } & (
  | { kind: 'settled'; settlement: Settlement }
  | { kind: 'sent'; outcome: Promise<HoldingOutcome> }
);

/**
 * Sends a claimed batch. A recipient whose send exists already (its worker died before settling it) is settled
 * from that send and never sent again. The others: a contact deleted or unsubscribed since the target was fixed
 * is skipped; each remaining message is rendered and goes through acceptSend with the recipient's fixed send id
 * and holdOnDefer, all at once (their sends share group commits). Held (warm-up cap) and refused sends are
 * released for a later batch; the rest are settled in one statement with the counters.
 */
export async function sendBatch(deps: SendingDeps, ctx: BatchContext, claimed: ClaimedRecipient[]): Promise<BatchResult> {
  const { campaign } = ctx;
  const done = await existingSends(deps.sql, claimed.map((r) => r.send_id));
  const contacts = new Map((await recipientContacts(deps.sql, campaign.tenant_id, claimed.filter((r) => !done.has(r.send_id)).map((r) => r.contact_id))).map((c) => [c.id, c]));
  const attempts: Attempt[] = claimed.map((recipient) => {
    const skip = (reason: Extract<Settlement, { status: 'skipped' }>['reason']): Attempt => ({
      recipient,
      kind: 'settled',
      settlement: { contactId: recipient.contact_id, status: 'skipped', reason },
    });
    const sent = done.get(recipient.send_id);
    if (sent !== undefined) return sent === 'dropped' ? skip('suppressed') : { recipient, kind: 'settled', settlement: { contactId: recipient.contact_id, status: 'queued' } };
    const contact = contacts.get(recipient.contact_id);
    if (!contact || contact.status === 'deleted') return skip('deleted');
    if (contact.status === 'unsubscribed') return skip('unsubscribed');
    const input = campaignSendInput(
      deps,
      ctx,
      {
        sendId: recipient.send_id,
        variant: recipient.variant,
        email: recipient.email,
        contact: { first_name: contact.first_name, last_name: contact.last_name, profile: profileOf(contact) },
        customFields: visibleCustomFields(ctx.catalog, contact.custom_fields),
      },
      { id: campaign.id, variant: recipient.variant, contactId: recipient.contact_id },
    );
    if (input instanceof AppError) {
      deps.log.info({ campaignId: campaign.id, contactId: recipient.contact_id, reason: input.message }, 'campaign recipient skipped as invalid');
      return skip('invalid');
    }
    const outcome = acceptSend(deps, input);
    // Awaited below, all together; until then a rejection must not count as unhandled.
    outcome.catch(() => undefined);
    return { recipient, kind: 'sent', outcome };
  });

  const result: BatchResult = { queued: 0, skipped: 0, released: 0, heldUntil: undefined, refusal: undefined, failure: undefined };
  const settlements: Settlement[] = [];
  let unexpected: unknown;
  for (const attempt of attempts) {
    const contactId = attempt.recipient.contact_id;
    if (attempt.kind === 'settled') {
      settlements.push(attempt.settlement);
      continue;
    }
    try {
      const outcome = await attempt.outcome;
      if (isHeld(outcome)) {
        result.heldUntil ??= outcome.held.until;
        settlements.push({ contactId, status: 'pending' });
      } else if (isRefused(outcome)) {
        result.refusal ??= outcome.refusal;
        settlements.push({ contactId, status: 'pending' });
      } else {
        settlements.push(outcome.send.status === 'dropped' ? { contactId, status: 'skipped', reason: 'suppressed' } : { contactId, status: 'queued' });
      }
    } catch (err) {
      if (campaignWide(err)) {
        result.failure ??= (err as Error).message;
        settlements.push({ contactId, status: 'pending' });
      } else if (recipientFault(err)) {
        deps.log.info({ campaignId: campaign.id, contactId, reason: (err as Error).message }, 'campaign recipient skipped as invalid');
        settlements.push({ contactId, status: 'skipped', reason: 'invalid' });
      } else {
        // The database or the signer failed: the row is released and the job runs again (its send, if it was
        // stored after all, is found by id then).
        unexpected ??= err;
        settlements.push({ contactId, status: 'pending' });
      }
    }
  }
  await settleRecipients(deps.sql, campaign.id, settlements);
  if (unexpected !== undefined) throw unexpected;
  for (const s of settlements) {
    if (s.status === 'queued') result.queued++;
    else if (s.status === 'skipped') result.skipped++;
    else result.released++;
  }
  return result;
}
