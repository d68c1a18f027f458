// Goal conversions: recorded with the clicks that make them (in the click batch's transaction), and a campaign's conversion report.
import type { Queryable } from '../../db/connection.js';
import { campaignConversionTotals, type ConversionInsert, type GoalRow } from './queries.js';
import { clickBudget, matches, revenueOf } from './rules.js';

/** What conversion recording needs of a stored click event. */
export interface ClickEvent {
  id: string;
  tenant_id: string;
  type: string;
  send_id: string;
  campaign_id: string | null;
  contact_id: string | null;
  occurred_at: Date;
  detail: Record<string, unknown>;
}

function clicksWithUrl(events: readonly ClickEvent[]): ClickEvent[] {
  return events.filter((e) => e.type === 'click' && typeof e.detail['url'] === 'string' && e.detail['url'] !== '');
}

/**
 * The conversions of these events against the goals already read (the tracking recorder reads them with its other
 * work): one for each (click, goal of its tenant) whose rule matches the clicked URL, worth what the goal says at that
 * moment. Recorded at click time, not resolved at query time, so that a goal edited or deleted later does not rewrite
 * history (the spec's deleted-goal rows need the conversion to outlive its goal). Scanner clicks are recorded too, as
 * the scanner flag can still be set afterwards (every link at once); reports leave them out.
 */
export function conversionsOf(events: readonly ClickEvent[], goals: readonly GoalRow[]): ConversionInsert[] {
  const rows: ConversionInsert[] = [];
  if (goals.length === 0) return rows;
  // Oldest first: when a click's regex budget runs out, the goals it leaves unmatched are the newest, whatever order the rows came in.
  const ordered = [...goals].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  for (const click of clicksWithUrl(events)) {
    const url = click.detail['url'] as string;
    const budget = clickBudget();
    for (const goal of ordered) {
      if (goal.tenant_id !== click.tenant_id || !matches(goal, url, budget)) continue;
      rows.push({
        tenant_id: click.tenant_id,
        event_id: click.id,
        goal_id: goal.id,
        goal_name: goal.name,
        campaign_id: click.campaign_id,
        contact_id: click.contact_id,
        send_id: click.send_id,
        revenue_cents: revenueOf(goal, url),
        occurred_at: click.occurred_at,
      });
    }
  }
  return rows;
}

export interface GoalConversionsReport {
  campaign_id: string;
  total_conversions: number;
  unique_converters: number;
  revenue_cents: number;
  by_goal: { goal_id: string | null; goal_name: string; conversions: number; unique_converters: number; revenue_cents: number }[];
}

/** The campaign's conversions (the campaign must be the tenant's: callers check first), by goal with the most revenue first. */
export async function campaignGoalConversions(db: Queryable, tenantId: string, campaignId: string): Promise<GoalConversionsReport> {
  const { all, byGoal } = await campaignConversionTotals(db, tenantId, campaignId);
  const sorted = [...byGoal].sort(
    (a, b) =>
      b.revenue_cents - a.revenue_cents ||
      b.conversions - a.conversions ||
      (a.goal_id === null ? 1 : 0) - (b.goal_id === null ? 1 : 0) ||
      a.goal_name.localeCompare(b.goal_name),
  );
  return {
    campaign_id: campaignId,
    total_conversions: all.conversions,
    unique_converters: all.unique_converters,
    revenue_cents: all.revenue_cents,
    by_goal: sorted,
  };
}
