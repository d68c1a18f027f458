// Sends a campaign's seed copies (one per active seed mailbox, made when its target was fixed) through the same send use-case and gates as its recipients,
// but outside its audience: no contact, no campaign counters.
import { AppError } from '../kernel/errors.js';
import { PROFILE_COLUMN_NAMES } from '../audiences/contacts/fields.js';
import { acceptSend, isHeld, isRefused, type HoldingOutcome } from '../sending/accept.js';
import type { SendingDeps } from '../sending/deps.js';
import { claimSeedHits, settleSeedHits, type SeedSettlement } from '../deliverability/seed-mailboxes/queries.js';
import { campaignSendInputs, type BatchContext } from './fanout-batch.js';
import { existingSends } from './recipient-queries.js';
import { RenderOverBudget } from './content.js';

/** How the copies went: how many were handed over (or found sent), how many were released for a later run. */
export interface SeedCopiesResult {
  sent: number;
  released: number;
}

const EMPTY_PROFILE = Object.fromEntries(PROFILE_COLUMN_NAMES.map((k) => [k, null]));

/**
 * Claims the campaign's unsent seed copies and hands each to acceptSend with its fixed send id. The send carries
 * no campaign (sends.campaign_id stays null), so the campaign's counters, event feed and stats never see it; the
 * seed hit row is what ties it to the campaign. A copy the gates hold (warm-up cap) or refuse (quota, suspension)
 * is released and tried again by the next run: the recipients' batches meet the same gate and make the campaign
 * wait. A copy whose send exists already (a crash before settling) is settled from it, never sent twice.
 */
export async function sendSeedCopies(deps: SendingDeps, ctx: BatchContext): Promise<SeedCopiesResult> {
  const { campaign } = ctx;
  const now = deps.clock.now();
  const lease = new Date(now.getTime() + deps.config.campaigns.fanout.claim_lease_seconds * 1000);
  const claimed = await claimSeedHits(deps.sql, campaign.id, deps.config.seedlist.claim_batch, now, lease);
  if (claimed.length === 0) return { sent: 0, released: 0 };
  const done = await existingSends(
    deps.sql,
    claimed.map((h) => h.send_id),
  );

  const fresh = claimed.filter((hit) => !done.has(hit.send_id));
  // A seed is nobody: Liquid sees its address and empty profile fields (defaults apply).
  const inputs = await campaignSendInputs(
    deps,
    ctx,
    fresh.map((hit) => ({
      recipient: {
        sendId: hit.send_id,
        variant: null,
        email: hit.email,
        contact: { first_name: null, last_name: null, profile: EMPTY_PROFILE },
        customFields: {},
      },
      campaign: null,
    })),
  );
  const inputOf = new Map(fresh.map((hit, k) => [hit.id, inputs[k]!]));
  const attempts = claimed.map((hit): { id: string; outcome: Promise<HoldingOutcome | 'exists' | 'invalid' | 'pending'> } => {
    const input = inputOf.get(hit.id);
    if (input === undefined) return { id: hit.id, outcome: Promise.resolve('exists') };
    if (input instanceof AppError) return { id: hit.id, outcome: Promise.resolve('invalid') };
    // Over the render budget: tried again with the recipients, once the campaign is resumed.
    if (input instanceof RenderOverBudget) return { id: hit.id, outcome: Promise.resolve('pending') };
    const outcome = acceptSend(deps, input);
    outcome.catch(() => undefined);
    return { id: hit.id, outcome };
  });

  const settlements: SeedSettlement[] = [];
  let unexpected: unknown;
  for (const a of attempts) {
    try {
      const outcome = await a.outcome;
      if (outcome === 'exists') settlements.push({ id: a.id, state: 'sent' });
      else if (outcome === 'invalid') settlements.push({ id: a.id, state: 'not_sent' });
      else if (outcome === 'pending') settlements.push({ id: a.id, state: 'pending' });
      else if (isHeld(outcome) || isRefused(outcome)) settlements.push({ id: a.id, state: 'pending' });
      else settlements.push({ id: a.id, state: 'sent' });
    } catch (err) {
      // A 422 for this message (its size) fails only this copy; anything else (the From domain, the database)
      // leaves it for the next run, where the recipients' batch reports the campaign-wide failure.
      if (err instanceof AppError && (err.slug === 'payload_too_large' || (err.slug === 'validation_error' && !err.message.startsWith('from_email')))) {
        settlements.push({ id: a.id, state: 'not_sent' });
      } else {
        if (!(err instanceof AppError)) unexpected ??= err;
        settlements.push({ id: a.id, state: 'pending' });
      }
    }
  }
  await settleSeedHits(deps.sql, settlements, deps.clock.now());
  if (unexpected !== undefined) throw unexpected;
  const sent = settlements.filter((s) => s.state === 'sent').length;
  deps.log.info({ campaignId: campaign.id, sent, claimed: claimed.length }, 'campaign seed copies');
  return { sent, released: settlements.filter((s) => s.state === 'pending').length };
}
