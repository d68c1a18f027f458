// A campaign's A/B test as tenants read and close it: both variants' counts and rates with the z-test's recommendation (GET /ab-results), and declaring the
// winner, which sends the held remainder with it exactly once (POST /ab/finalize).
import { writeAudit } from '../operations/audit/log.js';
import type { Queryable } from '../db/connection.js';
import { conflict, validationError } from '../kernel/errors.js';
import { judge, type Significance } from './ab-test.js';
import { enqueueFanout } from './fanout-jobs.js';
import type { Caller, LifecycleDeps } from './lifecycle.js';
import type { CampaignRow } from './queries.js';
import type { CampaignStatus } from './statuses.js';
import { requireCampaign } from './service.js';
import { ratio } from './stats.js';
import { declareWinner, heldCount, releaseHeld, variantCounters, ZERO_COUNTERS, type StatCounters } from './stats-queries.js';

export interface VariantResult {
  variant: 'a' | 'b';
  subject: string | null;
  sent: number;
  delivered: number;
  unique_opens: number;
  unique_human_opens: number;
  unique_clicks: number;
  unique_human_clicks: number;
  open_rate: number;
  click_rate: number;
  human_open_rate: number;
  human_click_rate: number;
}

export interface AbResult {
  campaign_id: string;
  has_ab_test: boolean;
  /** The campaign's ab_metric: what the test compares. */
  metric: 'open' | 'click';
  variant_a: VariantResult | null;
  variant_b: VariantResult | null;
  winner: 'a' | 'b' | null;
  winner_declared_at: Date | null;
  recommendation: string;
  /** The z-test behind the recommendation; null without an A/B test. */
  significance: Significance | null;
}

function variantOf(variant: 'a' | 'b', subject: string | null, c: StatCounters): VariantResult {
  return {
    variant,
    subject,
    sent: c.sent,
    delivered: c.delivered,
    unique_opens: c.unique_opens,
    unique_human_opens: c.unique_human_opens,
    unique_clicks: c.unique_clicks,
    unique_human_clicks: c.unique_human_clicks,
    open_rate: ratio(c.unique_opens, c.delivered),
    click_rate: ratio(c.unique_clicks, c.delivered),
    human_open_rate: ratio(c.unique_human_opens, c.delivered),
    human_click_rate: ratio(c.unique_human_clicks, c.delivered),
  };
}

/**
 * The test on the campaign's metric: each variant's delivered messages against its recipients with a human open
 * (or click) — machine opens (Apple Mail Privacy Protection opens every message) and scanner clicks would blur
 * the difference the test looks for.
 */
async function resultOf(db: Queryable, row: CampaignRow): Promise<AbResult> {
  const base = { campaign_id: row.id, metric: row.ab_metric, winner: row.ab_winner, winner_declared_at: row.ab_winner_declared_at };
  if (row.ab_split_pct === null) {
    return {
      ...base,
      has_ab_test: false,
      variant_a: null,
      variant_b: null,
      recommendation: 'This campaign has no A/B test (ab_split_pct is not set).',
      significance: null,
    };
  }
  const counters = await variantCounters(db, row.id);
  const a = counters.get('a') ?? ZERO_COUNTERS;
  const b = counters.get('b') ?? ZERO_COUNTERS;
  const successes = (c: StatCounters) => (row.ab_metric === 'open' ? c.unique_human_opens : c.unique_human_clicks);
  const significance = judge(row.ab_metric, { n: a.delivered, x: successes(a) }, { n: b.delivered, x: successes(b) });
  const declared = row.ab_winner ? `Variant ${row.ab_winner} was declared the winner; the remainder is sent with it. ` : '';
  return {
    ...base,
    has_ab_test: true,
    variant_a: variantOf('a', row.subject, a),
    variant_b: variantOf('b', row.subject_b, b),
    recommendation: declared + significance.recommendation,
    significance,
  };
}

/** GET /campaigns/{id}/ab-results: the tenant's campaign (404 otherwise). */
export async function abResults(db: Queryable, tenantId: string, id: string): Promise<AbResult> {
  return resultOf(db, await requireCampaign(db, tenantId, id));
}

/** The statuses a winner can be declared in: the test has started (the held remainder waits, or there is none). */
const FINALIZE_FROM: readonly CampaignStatus[] = ['sending', 'paused', 'sent'];

/**
 * POST /campaigns/{id}/ab/finalize: declares the winner and releases the held remainder to the fan-out, which
 * sends it with the winner's subject (the first chunk here, the rest by the fan-out as it runs out of pending ones;
 * `released` counts them all). In one transaction with the campaign row locked (as status changes and the
 * A/B split take it): the first finalize wins, any later one is 409 and releases nothing, so the remainder is sent
 * once. 422 (naming winner) without an A/B test; 409 before the split is made (draft, scheduled, recipients still
 * being fixed) or after a cancel or failure. A paused campaign keeps its remainder pending until it is resumed.
 */
export async function finalizeAbTest(deps: LifecycleDeps, caller: Caller, id: string, winner: 'a' | 'b'): Promise<AbResult & { released: number }> {
  const at = deps.clock.now();
  const { row, released } = await deps.sql.begin(async (tx) => {
    const current = await requireCampaign(tx, caller.tenantId, id, { lock: true });
    if (current.ab_split_pct === null) throw validationError('winner', 'the campaign has no A/B test (ab_split_pct is not set): there is no winner to declare');
    if (current.ab_winner !== null)
      throw conflict(`the A/B test is finalized already: variant ${current.ab_winner} won at ${current.ab_winner_declared_at?.toISOString()}`);
    if (!FINALIZE_FROM.includes(current.status))
      throw conflict(`cannot finalize the A/B test of a campaign that is ${current.status}: only once it is ${FINALIZE_FROM.join(', ')}`);
    if (current.targeted_at === null)
      throw conflict('the A/B split is not made yet: the recipients are still being fixed; finalize once the test portion is sending');
    if (!(await declareWinner(tx, current.id, winner, at))) throw conflict('the A/B test is finalized already');
    // One batch of the remainder now; the fan-out releases the rest chunk by chunk as it goes (runFanout), so this
    // transaction stays short however large the remainder.
    const count = await heldCount(tx, current.id);
    await releaseHeld(tx, current.id, deps.config.campaigns.fanout.batch_size);
    if (current.status === 'sending' && count > 0) await enqueueFanout(deps, tx, current.id);
    await writeAudit(tx, {
      tenantId: caller.tenantId,
      actor: caller.actor,
      action: 'campaign.ab_finalized',
      resourceType: 'campaign',
      resourceId: current.id,
      metadata: { name: current.name, from: current.status, to: current.status, winner, released: count },
      at,
    });
    return { row: { ...current, ab_winner: winner, ab_winner_declared_at: at }, released: count };
  });
  deps.log.info({ campaignId: row.id, winner, released }, 'A/B test finalized');
  return { ...(await resultOf(deps.sql, row)), released };
}
