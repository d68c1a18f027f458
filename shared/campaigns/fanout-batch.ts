// Sends one claimed batch of a campaign: recipients whose send already exists are left as they are, the rest are rendered and handed to the send use-case
// together, and the batch is completed (or given back unfinished) in one transaction. What the fan-out reads and writes goes through a FanoutStore
// (fanout-store.ts: PostgreSQL), so these rules run against any store.
import { AppError } from '../kernel/errors.js';
import { normalizeEmail } from '../kernel/email.js';
import { PROFILE_COLUMN_NAMES } from '../audiences/contacts/fields.js';
import { visibleCustomFields } from '../audiences/custom-fields/values.js';
import { isHeld, isRefused, type AcceptInput, type HoldingOutcome } from '../sending/accept.js';
import type { SendingDeps } from '../sending/deps.js';
import type { Refusal } from '../sending/gates/types.js';
import { renderCampaignMessages, RenderOverBudget, type CampaignMessage, type CampaignRecipient, type PreparedContent } from './content.js';
import type { Batch, BatchOutcome, BatchRecipient, FanoutLeft } from './batch-queries.js';
import type { Sender } from './default-sender.js';
import type { CampaignRow } from './queries.js';
import type { SkipReason } from './recipient-queries.js';

/**
 * The reads and writes of the fan-out, in its own terms. Claims, completions and the cancel sweep are set-based
 * statements that apply their rule in SQL (a lease, SKIP LOCKED, counters that commit with the rows): they are the
 * store's job, each one transaction (batch-queries.ts says what each does).
 */
export interface FanoutStore {
  /** A batch left behind (given back, or its claim ran out) first, else the next `size` positions; undefined: nothing to claim. */
  claimBatch(campaignId: string, size: number, now: Date, leaseUntil: Date): Promise<Batch | undefined>;
  /** The batch's pending recipients, in position order, with their contact as it is now and their send's status if it exists. */
  recipientsOf(batch: Batch, tenantId: string): Promise<BatchRecipient[]>;
  /** A recipient's message through the send use-case (its gates, the quota, the delivery queue), under its fixed send id. */
  send(input: AcceptInput): Promise<HoldingOutcome>;
  /** Ends a run over a batch while this claim stands (false: another worker took it over): complete, or given back. */
  finishBatch(batch: Batch, outcome: BatchOutcome): Promise<boolean>;
  /** Releases up to `limit` recipients held for the A/B winner to be sent; how many. */
  releaseHeld(campaignId: string, limit: number): Promise<number>;
  fanoutLeft(campaignId: string, now: Date): Promise<FanoutLeft>;
  /** One step of the sweep after a cancel; how many recipients changed (0: done). */
  sweepCancelled(campaignId: string, now: Date, limit: number): Promise<number>;
}

/** What a run knows once, for all its batches. */
export interface BatchContext {
  campaign: CampaignRow;
  /** The From and Reply-To of its messages: the campaign's own, else the tenant's default (default-sender.ts). */
  sender: Sender;
  content: PreparedContent;
  tenant: AcceptInput['tenant'];
  mode: 'live' | 'test';
  /** Keys of the tenant's custom-field catalog: only these are shown to templates. */
  catalog: { key: string }[];
}

/** How a batch ended: the counts, and what stops the run (the warm-up cap, a refusal, a campaign-wide failure). */
export interface BatchResult {
  /** Handed to the send path in this run (or found sent by an earlier one). */
  queued: number;
  skipped: number;
  /** Left unsent for a later run (held at the warm-up cap, refused, or failed): the batch was given back unfinished. */
  released: number;
  /** The warm-up cap was reached: the first held send's retry instant. */
  heldUntil: Date | undefined;
  refusal: Refusal | undefined;
  /** The campaign cannot go on (no domain that may send for its From address): why. */
  failure: string | undefined;
  /** Renders exceeded the batch's render budget (or a limit): why; the recipients not rendered were released, not skipped. */
  overBudget: string | undefined;
}

/** An error that concerns the whole campaign, not one recipient: its From address can no longer send. */
function campaignWide(err: unknown): boolean {
  return err instanceof AppError && (err.slug === 'no_verified_domain' || (err.slug === 'validation_error' && err.message.startsWith('from_email')));
}

/** An error that concerns one recipient's message (its address, its render, its size): skipped as invalid. */
function recipientFault(err: unknown): boolean {
  return err instanceof AppError && (err.slug === 'validation_error' || err.slug === 'payload_too_large');
}

/** One message to make: its recipient, and what ties its send to the campaign (null for a seed copy). */
export interface CampaignSendEntry {
  recipient: CampaignRecipient;
  campaign: AcceptInput['campaign'] | null;
}

/** What became of an entry: the send use-case's input, a fault of this recipient's message (skipped by it), or a render over budget. */
export type CampaignSendPlan = AcceptInput | AppError | RenderOverBudget;

/**
 * The campaign messages as the send use-case takes them (recipients and seed copies alike): the address normalized,
 * the content rendered for each recipient on the render threads within the batch's render budget, the campaign's From
 * and Reply-To; `campaign` ties the send to the campaign (null for a seed copy, which stays outside its audience). A
 * fault of a recipient's message (its address, its render, its size) comes back as an AppError to skip it by; a
 * render stopped by the budget or a limit as RenderOverBudget; anything else is thrown.
 */
export async function campaignSendInputs(deps: SendingDeps, ctx: BatchContext, entries: CampaignSendEntry[]): Promise<CampaignSendPlan[]> {
  const c = ctx.campaign;
  // Nothing leaves for a test-mode campaign or a sandbox tenant: their links name their target instead of redirecting.
  const interstitial = ctx.mode === 'test' || ctx.tenant.is_sandbox;
  const links = { key: deps.linkKey, publicUrl: deps.config.publicUrl, hostname: deps.config.hostname, interstitial };
  const plans: (CampaignSendPlan | string)[] = entries.map((e) => {
    try {
      return normalizeEmail(e.recipient.email, 'to');
    } catch (err) {
      if (!recipientFault(err)) throw err;
      return err as AppError;
    }
  });
  const toRender = entries.flatMap((e, i) =>
    typeof plans[i] === 'string' ? [{ i, input: { content: ctx.content, campaign: c, links, recipient: { ...e.recipient, email: plans[i] as string } } }] : [],
  );
  const r = deps.config.render;
  const messages = await renderCampaignMessages(
    { renderer: deps.renderer, budgetMs: r.campaign_batch_budget_ms, itemsPerJob: r.campaign_job_items },
    toRender.map((x) => x.input),
  );
  toRender.forEach(({ i }, k) => {
    const message = messages[k]!;
    plans[i] = message instanceof AppError || message instanceof RenderOverBudget ? message : sendInput(ctx, entries[i]!, plans[i] as string, message);
  });
  return plans as CampaignSendPlan[];
}

function sendInput(ctx: BatchContext, entry: CampaignSendEntry, to: string, message: CampaignMessage): AcceptInput {
  return {
    tenant: ctx.tenant,
    mode: ctx.mode,
    apiKeyId: null,
    source: 'campaign',
    sendId: entry.recipient.sendId,
    ...(entry.campaign ? { campaign: entry.campaign } : {}),
    holdOnDefer: true,
    from: { address: ctx.sender.from_email, name: ctx.sender.from_name ?? undefined },
    to,
    content: {
      kind: 'compose',
      subject: message.subject,
      html: message.html,
      text: message.text,
      replyTo: ctx.sender.reply_to ?? undefined,
      headers: message.headers,
    },
  };
}

const profileOf = (r: BatchRecipient) => Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, r[k]]));

type Attempt = { recipient: BatchRecipient } & (
  | { kind: 'done' }
  | { kind: 'skipped'; reason: SkipReason }
  | { kind: 'sent'; outcome: Promise<HoldingOutcome> }
  | { kind: 'over_budget'; reason: string }
);

/**
 * Sends a claimed batch. A recipient whose send exists already (an earlier run of the batch sent it, then died or
 * was stopped by the warm-up cap) is never sent again. The others: a contact deleted or unsubscribed since the
 * target was fixed is skipped; the remaining messages are rendered (on the render threads, within the batch's render
 * budget) and go through acceptSend with the recipient's fixed send id and holdOnDefer, all at once (their sends share
 * group commits). When every recipient is sent or skipped the batch is completed; a send held (warm-up cap), refused
 * or failed, or a render over budget (its recipient stays pending: the campaign pauses), leaves it unfinished for a later run.
 */
export async function sendBatch(deps: SendingDeps, store: FanoutStore, ctx: BatchContext, batch: Batch): Promise<BatchResult> {
  const { campaign } = ctx;
  const recipients = await store.recipientsOf(batch, campaign.tenant_id);
  const attempts: Attempt[] = [];
  const entries: { at: number; entry: CampaignSendEntry }[] = [];
  for (const recipient of recipients) {
    if (recipient.send_status !== null)
      attempts.push(recipient.send_status === 'dropped' ? { recipient, kind: 'skipped', reason: 'suppressed' } : { recipient, kind: 'done' });
    else if (recipient.contact_status === null || recipient.contact_status === 'deleted') attempts.push({ recipient, kind: 'skipped', reason: 'deleted' });
    else if (recipient.contact_status === 'unsubscribed') attempts.push({ recipient, kind: 'skipped', reason: 'unsubscribed' });
    else {
      entries.push({
        at: attempts.push({ recipient, kind: 'done' }) - 1,
        entry: {
          recipient: {
            sendId: recipient.send_id,
            variant: recipient.variant,
            email: recipient.email,
            contact: { first_name: recipient.first_name, last_name: recipient.last_name, profile: profileOf(recipient) },
            customFields: visibleCustomFields(ctx.catalog, recipient.custom_fields ?? {}),
          },
          campaign: { id: campaign.id, variant: recipient.variant, contactId: recipient.contact_id },
        },
      });
    }
  }
  const inputs = await campaignSendInputs(
    deps,
    ctx,
    entries.map((e) => e.entry),
  );
  entries.forEach(({ at }, k) => {
    const recipient = attempts[at]!.recipient;
    const input = inputs[k]!;
    if (input instanceof RenderOverBudget) {
      attempts[at] = { recipient, kind: 'over_budget', reason: input.reason };
    } else if (input instanceof AppError) {
      deps.log.info({ campaignId: campaign.id, contactId: recipient.contact_id, reason: input.message }, 'campaign recipient skipped as invalid');
      attempts[at] = { recipient, kind: 'skipped', reason: 'invalid' };
    } else {
      const outcome = store.send(input);
      // Awaited below, all together; until then a rejection must not count as unhandled.
      outcome.catch(() => undefined);
      attempts[at] = { recipient, kind: 'sent', outcome };
    }
  });

  const result: BatchResult = { queued: 0, skipped: 0, released: 0, heldUntil: undefined, refusal: undefined, failure: undefined, overBudget: undefined };
  const skipped: { contactId: string; reason: SkipReason }[] = [];
  const sent: string[] = [];
  const skip = (contactId: string, reason: SkipReason) => skipped.push({ contactId, reason });
  let unexpected: unknown;
  for (const attempt of attempts) {
    const contactId = attempt.recipient.contact_id;
    if (attempt.kind === 'done') {
      sent.push(contactId);
      continue;
    }
    if (attempt.kind === 'skipped') {
      skip(contactId, attempt.reason);
      continue;
    }
    if (attempt.kind === 'over_budget') {
      // Not the recipient's fault: left pending (no send, no quota) for when the campaign is resumed.
      result.overBudget ??= attempt.reason;
      result.released++;
      continue;
    }
    try {
      const outcome = await attempt.outcome;
      if (isHeld(outcome)) {
        result.heldUntil ??= outcome.held.until;
        result.released++;
      } else if (isRefused(outcome)) {
        result.refusal ??= outcome.refusal;
        result.released++;
      } else if (outcome.send.status === 'dropped') {
        skip(contactId, 'suppressed');
      } else {
        sent.push(contactId);
      }
    } catch (err) {
      if (campaignWide(err)) {
        result.failure ??= (err as Error).message;
        result.released++;
      } else if (recipientFault(err)) {
        deps.log.info({ campaignId: campaign.id, contactId, reason: (err as Error).message }, 'campaign recipient skipped as invalid');
        skip(contactId, 'invalid');
      } else {
        // The database or the signer failed: the batch is given back and the job runs again (a send stored after
        // all is found by its id then).
        unexpected ??= err;
        result.released++;
      }
    }
  }
  result.queued = sent.length;
  result.skipped = skipped.length;
  const mine = await store.finishBatch(batch, { skipped, sent, complete: result.released === 0 });
  if (unexpected !== undefined) throw unexpected;
  if (!mine) {
    // The worker that took the batch over records its recipients (the sends stored here among them, found by their
    // ids) and reports them: counted here too, a slow worker's batch would be counted twice.
    deps.log.warn({ campaignId: campaign.id, firstSeq: batch.firstSeq }, 'a campaign batch outlived its claim; the worker that took it over completes it');
    return { ...result, queued: 0, skipped: 0 };
  }
  return result;
}
