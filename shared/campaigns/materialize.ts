// Fixes a campaign's recipients when it starts sending: the target (list members, or the segment evaluated as of the start) copied page by page, each page
// one INSERT ... SELECT committed with its counters, its recipients' positions and the cursor reached; the A/B split after the last page.
import type { Clock } from '../kernel/clock.js';
import type { Config } from '../config/index.js';
import type { Queryable, Sql } from '../db/connection.js';
import { formatDeadline, setDeadline } from '../db/deadline.js';
import { listMemberIdPage } from '../audiences/lists/members.js';
import { selectSegment } from '../audiences/segments/service.js';
import { findCampaignById, recipientSeq, saveTargetPosition, type CampaignRow } from './queries.js';
import { assignVariants, materializePage } from './recipient-queries.js';
import { makeSeedHits } from '../deliverability/seed-mailboxes/queries.js';

export interface MaterializeDeps {
  sql: Sql;
  clock: Clock;
  config: Pick<Config, 'campaigns' | 'queries'>;
}

/** A page of target contact ids and the position after it (null: that was the last page). */
interface TargetPage {
  ids: string[];
  next: string | null;
}

/** The target is gone (its list or segment was deleted before every page was in): the campaign cannot be sent. */
export class TargetGone extends Error {
  override name = 'TargetGone';
}

async function targetPage(tx: Queryable, row: CampaignRow, limit: number): Promise<TargetPage> {
  const after = row.target_cursor ?? undefined;
  if (row.list_id !== null) return listMemberIdPage(tx, row.tenant_id, row.list_id, { limit, after });
  if (row.segment_id !== null) {
    // Evaluated as of the start, so rules relative to now (opened within N days) mean the same on every page.
    const selection = await selectSegment(tx, row.tenant_id, row.segment_id, row.started_at ?? new Date());
    const page = await selection.page({ limit, after });
    return { ids: page.contacts.map((c) => c.id), next: page.next_cursor };
  }
  throw new TargetGone('its list or segment was deleted before the recipients were fixed');
}

/** The failure reason of a campaign whose segment ran past its deadline while its recipients were fixed. */
export function segmentTooSlow(ms: number): string {
  return (
    `its segment's rule set is too expensive: selecting one page of its recipients ran past the ${formatDeadline(ms)} deadline and was stopped; ` +
    'simplify the segment and send the campaign again'
  );
}

export type MaterializeStep = 'more' | 'done' | 'not_sending';

/**
 * Materializes the next page of a sending campaign's target. The campaign row is locked for the page, so workers
 * of several processes take pages one after the other and each page is read once; a page retried after a crash
 * inserts nothing twice (a recipient is one row per contact). After the last page the A/B split is made, the
 * copies for the active seed mailboxes are added (outside the target and its counters) and targeted_at set, in the
 * same transaction: only then does sending start.
 */
export async function materializeNextPage(deps: MaterializeDeps, campaignId: string): Promise<MaterializeStep> {
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await findCampaignById(tx, campaignId, { lock: true });
    if (!row || row.status !== 'sending') return 'not_sending';
    if (row.targeted_at) return 'done';
    // A segment's rules are the tenant's: its page (and the rest of this transaction) gets a deadline, set only now
    // so the wait for the campaign's lock is not counted. Past it the statement is cancelled (57014: the fan-out
    // fails the campaign, saying why).
    if (row.segment_id !== null) await setDeadline(tx, deps.config.queries.deadlines_ms.segment_materialize);
    const page = await targetPage(tx, row, deps.config.campaigns.materialize.page_size);
    // Each page's recipients take the next positions, in page order: batches are ranges of them.
    const seqBase = await recipientSeq(tx, row.id);
    await materializePage(tx, { campaignId: row.id, tenantId: row.tenant_id, md5ListId: row.md5_list_id, seqBase }, page.ids);
    const done = page.next === null;
    if (done && row.ab_split_pct !== null) await assignVariants(tx, row.id, row.ab_split_pct);
    if (done) await makeSeedHits(tx, row.id, row.tenant_id, at);
    await saveTargetPosition(tx, row.id, { cursor: page.next, done, recipientSeq: seqBase + page.ids.length }, at);
    return done ? 'done' : 'more';
  });
}
