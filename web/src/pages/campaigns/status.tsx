// A campaign's status as a badge, with why it waits in words (the API's waiting_reason and waiting_until), its times
// in the zone the workspace schedules in.
import { inZone, scheduleZone } from '../../time-zone';

const TONE: Record<string, string> = { sent: 'ok', sending: '', scheduled: '', paused: 'warning', failed: 'problem', cancelled: '' };

const WAITING: Record<string, string> = {
  warmup_cap: "waiting for tomorrow's warm-up allowance",
  quota_exceeded: "waiting for next month's quota",
  tenant_suspended: 'waiting: the workspace is suspended',
  ab_winner: 'waiting for the A/B winner',
  render_budget: 'paused: its renders ran past their budget',
};

export interface CampaignState {
  status: string;
  waiting_reason?: string | null;
  waiting_until?: string | null;
  scheduled_at?: string | null;
}

/** Why the campaign is not sending now, in words; undefined when nothing holds it. */
export function waitingWords(c: CampaignState): string | undefined {
  if (c.status === 'scheduled' && c.scheduled_at) return `goes at ${inZone(c.scheduled_at, scheduleZone.value)}`;
  if (!c.waiting_reason) return undefined;
  const words = WAITING[c.waiting_reason] ?? `waiting: ${c.waiting_reason.replaceAll('_', ' ')}`;
  return c.waiting_until ? `${words} (until ${inZone(c.waiting_until, scheduleZone.value)})` : words;
}

export function CampaignStatus(props: { campaign: CampaignState }) {
  const why = waitingWords(props.campaign);
  return (
    <>
      <span class={`badge ${TONE[props.campaign.status] ?? ''}`}>{props.campaign.status}</span>
      {why && (
        <span class="hint block" data-testid="waiting">
          {why}
        </span>
      )}
    </>
  );
}
