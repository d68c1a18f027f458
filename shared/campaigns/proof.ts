// A campaign's proof: its message rendered for a chosen contact (or as nobody) and sent to up to five addresses through the send path, marked as a proof and
// kept out of the campaign's audience, counters and stats; and its preview, the same message rendered and answered, not sent.
import { randomUUID } from 'node:crypto';
import { writeAudit, type AuditActor } from '../operations/audit/log.js';
import { PROFILE_COLUMN_NAMES } from '../audiences/contacts/fields.js';
import { findContact } from '../audiences/contacts/queries.js';
import { listCustomFields } from '../audiences/custom-fields/queries.js';
import { visibleCustomFields } from '../audiences/custom-fields/values.js';
import type { Queryable } from '../db/connection.js';
import { AppError, notFound, validationError } from '../kernel/errors.js';
import { acceptSend, isRefused, type AcceptInput } from '../sending/accept.js';
import type { SendingDeps } from '../sending/deps.js';
import type { Refusal } from '../sending/gates/types.js';
import { normalizeEmail } from '../audiences/suppressions/service.js';
import { isUuid } from '../kernel/ids.js';
import { RenderOverBudget, trackedContent, type CampaignRecipient } from './content.js';
import { campaignSender } from './default-sender.js';
import { campaignSendInputs, type BatchContext } from './fanout-batch.js';
import { checkSendable } from './readiness.js';
import { insertProof } from './queries.js';
import { requireCampaign } from './service.js';

/** Addresses one proof request may name. */
export const MAX_PROOF_RECIPIENTS = 5;
/** Put before the rendered subject, so a proof is never mistaken for the campaign itself. */
export const PROOF_SUBJECT_PREFIX = '[Proof] ';

export interface ProofRequest {
  to: string[];
  contact_id?: string | undefined;
  /** The A/B variant's subject to use; default a (of an A/B campaign), else the one subject. */
  variant?: 'a' | 'b' | undefined;
}

export interface ProofCaller {
  /** As the credential resolved it: the send path's gates read its status and sandbox flag. */
  tenant: AcceptInput['tenant'];
  actor: AuditActor;
  mode: 'live' | 'test';
  apiKeyId: string | null;
}

export interface ProofSent {
  to: string;
  send_id: string;
  message_id: string;
  status: string;
}

/** The proof stopped at a gate (quota, suspension): nothing was sent to the addresses from this one on. */
export class ProofRefused extends Error {
  override name = 'ProofRefused';
  constructor(readonly refusal: Refusal) {
    super(refusal.reason);
  }
}

const EMPTY_PROFILE = Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, null]));

/** The recipient Liquid sees: the chosen contact (404 when it is not the tenant's), else nobody at the proof address. */
async function renderedFor(
  db: Queryable,
  tenantId: string,
  contactId: string | undefined,
): Promise<Omit<CampaignRecipient, 'sendId' | 'variant' | 'email'> & { email?: string }> {
  if (contactId === undefined) return { contact: { first_name: null, last_name: null, profile: EMPTY_PROFILE }, customFields: {} };
  const contact = isUuid(contactId) ? await findContact(db, tenantId, contactId.toLowerCase()) : undefined;
  if (!contact || contact.email === null) throw notFound('contact');
  const profile = Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, contact[k]]));
  return {
    email: contact.email,
    contact: { first_name: contact.first_name, last_name: contact.last_name, profile },
    customFields: visibleCustomFields(await listCustomFields(db, tenantId), contact.custom_fields),
  };
}

/** The proof addresses, normalized and without repeats: 1..5 of them (422 naming `to`). */
function proofAddresses(to: string[]): string[] {
  const addresses = [...new Set(to.map((address, i) => normalizeEmail(address, `to[${i}]`)))];
  if (addresses.length === 0) throw validationError('to', 'name at least one address');
  if (addresses.length > MAX_PROOF_RECIPIENTS) throw validationError('to', `a proof goes to at most ${MAX_PROOF_RECIPIENTS} addresses`);
  return addresses;
}

/** What a proof and a preview are rendered from: the campaign as it stands, for the chosen contact (or nobody). */
interface ProofRender {
  row: Awaited<ReturnType<typeof requireCampaign>>;
  variant: 'a' | 'b' | null;
  ctx: BatchContext;
  recipient: Awaited<ReturnType<typeof renderedFor>>;
}

async function proofRender(
  deps: SendingDeps,
  caller: Pick<ProofCaller, 'tenant' | 'mode'>,
  id: string,
  request: Omit<ProofRequest, 'to'>,
  tracking: boolean,
): Promise<ProofRender> {
  const found = await requireCampaign(deps.sql, caller.tenant.id, id);
  const recipient = await renderedFor(deps.sql, caller.tenant.id, request.contact_id);
  const content = await checkSendable(deps, found, caller.mode);
  if (request.variant === 'b' && found.ab_split_pct === null) throw validationError('variant', 'the campaign has no A/B test: there is no variant b');
  // Untracked, links still carry the campaign's UTM tags: where a click lands, without a pixel or redirects that
  // would name a send that never existed.
  const row = tracking ? found : { ...found, track_opens: false, track_clicks: false };
  const ctx: BatchContext = {
    campaign: row,
    sender: await campaignSender(deps.sql, row, caller.mode),
    content: trackedContent(content, row, { publicUrl: deps.config.publicUrl }),
    tenant: caller.tenant,
    mode: caller.mode,
    catalog: [],
  };
  return { row: found, variant: found.ab_split_pct === null ? null : (request.variant ?? 'a'), ctx, recipient };
}

/** The address a preview rendered as nobody is made for (a proof uses each proof address). */
export const PREVIEW_ADDRESS = 'someone@example.com';

export interface CampaignPreview {
  from: string;
  to: string;
  subject: string;
  html: string | null;
  text: string | null;
  variant: 'a' | 'b' | null;
}

/**
 * POST /campaigns/{id}/preview: the message a proof would carry (the same checks, render threads and budget), answered
 * instead of sent; with tracking left out. Nothing is stored, sent, counted or audited.
 */
export async function previewCampaign(
  deps: SendingDeps,
  caller: Pick<ProofCaller, 'tenant' | 'mode'>,
  id: string,
  request: Omit<ProofRequest, 'to'>,
): Promise<CampaignPreview> {
  const { ctx, variant, recipient } = await proofRender(deps, caller, id, request, false);
  const to = recipient.email ?? PREVIEW_ADDRESS;
  const [plan] = await campaignSendInputs(deps, ctx, [{ recipient: { ...recipient, email: to, sendId: randomUUID(), variant }, campaign: null }]);
  if (plan instanceof AppError) throw plan;
  if (plan instanceof RenderOverBudget) throw validationError('body', plan.reason);
  if (plan!.content.kind !== 'compose') throw new Error('a campaign message is always composed');
  const { subject, html, text } = plan!.content;
  return { from: ctx.sender.from_email, to, subject, html: html ?? null, text: text ?? null, variant };
}

/**
 * POST /campaigns/{id}/proof. The campaign must be sendable as it stands (target, sender, content: 422 or 412), in
 * any status. Each address gets its own send (source proof, subject prefixed "[Proof] ") through the same gates,
 * DKIM signing and delivery as the campaign's messages: it counts against the quota and the warm-up allowance, a
 * suppressed address is dropped; it carries no campaign (no counters, events feed or stats) and its unsubscribe link
 * changes nothing. Rendered on the render threads within one batch's render budget.
 */
export async function sendProof(deps: SendingDeps, caller: ProofCaller, id: string, request: ProofRequest): Promise<ProofSent[]> {
  const addresses = proofAddresses(request.to);
  const { row, ctx, variant, recipient } = await proofRender(deps, caller, id, request, true);
  const entries = addresses.map((to) => ({
    recipient: { ...recipient, email: recipient.email ?? to, sendId: randomUUID(), variant },
    campaign: null,
  }));
  const plans = await campaignSendInputs(deps, ctx, entries);
  const at = deps.clock.now();
  const sent: ProofSent[] = [];
  for (const [i, plan] of plans.entries()) {
    if (plan instanceof AppError) throw plan;
    if (plan instanceof RenderOverBudget) throw validationError('body', plan.reason);
    const input: AcceptInput = {
      ...plan,
      to: addresses[i]!,
      source: 'proof',
      apiKeyId: caller.apiKeyId,
      holdOnDefer: false,
      content: plan.content.kind === 'compose' ? { ...plan.content, subject: PROOF_SUBJECT_PREFIX + plan.content.subject } : plan.content,
    };
    const outcome = await acceptSend(deps, input, (tx, r) =>
      insertProof(tx, { sendId: r.send.id, campaignId: row.id, tenantId: row.tenant_id, contactId: request.contact_id?.toLowerCase() ?? null, at }),
    );
    if (isRefused(outcome)) throw new ProofRefused(outcome.refusal);
    sent.push({ to: input.to, send_id: outcome.send.id, message_id: outcome.send.message_id, status: outcome.send.status });
  }
  await writeAudit(deps.sql, {
    tenantId: caller.tenant.id,
    actor: caller.actor,
    action: 'campaign.proof_sent',
    resourceType: 'campaign',
    resourceId: row.id,
    metadata: { to: addresses, contact_id: request.contact_id?.toLowerCase() ?? null, variant },
    at,
  });
  return sent;
}
