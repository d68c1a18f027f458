// A campaign's proof: its message rendered for a chosen contact (or as nobody) and sent to up to five addresses through the send path, marked as a proof and
// kept out of the campaign's audience, counters and stats.
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

/**
 * POST /campaigns/{id}/proof. The campaign must be sendable as it stands (target, sender, content: 422 or 412), in
 * any status. Each address gets its own send (source proof, subject prefixed "[Proof] ") through the same gates,
 * DKIM signing and delivery as the campaign's messages: it counts against the quota and the warm-up allowance, a
 * suppressed address is dropped; it carries no campaign (no counters, events feed or stats) and its unsubscribe link
 * changes nothing. Rendered on the render threads within one batch's render budget.
 */
export async function sendProof(deps: SendingDeps, caller: ProofCaller, id: string, request: ProofRequest): Promise<ProofSent[]> {
  const addresses = proofAddresses(request.to);
  const row = await requireCampaign(deps.sql, caller.tenant.id, id);
  const recipient = await renderedFor(deps.sql, caller.tenant.id, request.contact_id);
  const content = await checkSendable(deps, row, caller.mode);
  if (request.variant === 'b' && row.ab_split_pct === null) throw validationError('variant', 'the campaign has no A/B test: there is no variant b');
  const ctx: BatchContext = {
    campaign: row,
    sender: await campaignSender(deps.sql, row, caller.mode),
    content: trackedContent(content, row, { publicUrl: deps.config.publicUrl }),
    tenant: caller.tenant,
    mode: caller.mode,
    catalog: [],
  };
  const variant = row.ab_split_pct === null ? null : (request.variant ?? 'a');
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
