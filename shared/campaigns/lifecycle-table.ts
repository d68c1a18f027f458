// The campaign lifecycle as data: which statuses each action starts from and where it leads (docs/audiences-and-campaigns.md: Lifecycle, the transition
// table), and the 409 for any other.
import { conflict } from '../kernel/errors.js';
import type { CampaignRow } from './queries.js';
import type { CampaignStatus } from './statuses.js';

/** Actions a caller takes on a campaign. */
export type CampaignAction = 'edit' | 'delete' | 'schedule' | 'unschedule' | 'send' | 'pause' | 'resume' | 'cancel';

export interface Transition {
  from: readonly CampaignStatus[];
  /** The status afterwards; absent for actions that keep it (edit) or remove the campaign (delete). */
  to?: CampaignStatus;
}

/**
 * The caller's transitions. The fan-out's own are: scheduled → sending when the time comes; sending → sent when
 * every recipient is handled; sending → paused when the monthly quota runs out; sending → failed when it cannot go
 * on (no sending domain, no content, the target gone).
 */
export const TRANSITIONS: Record<CampaignAction, Transition> = {
  edit: { from: ['draft', 'scheduled'] },
  delete: { from: ['draft'] },
  schedule: { from: ['draft'], to: 'scheduled' },
  unschedule: { from: ['scheduled'], to: 'draft' },
  send: { from: ['draft', 'scheduled'], to: 'sending' },
  pause: { from: ['sending'], to: 'paused' },
  resume: { from: ['paused'], to: 'sending' },
  cancel: { from: ['draft', 'scheduled', 'sending', 'paused'], to: 'cancelled' },
};

const WHAT: Record<CampaignAction, string> = {
  edit: 'change',
  delete: 'delete',
  schedule: 'schedule',
  unschedule: 'unschedule',
  send: 'send',
  pause: 'pause',
  resume: 'resume',
  cancel: 'cancel',
};

/** 409 unless the campaign's status allows the action. */
export function requireStatus(row: Pick<CampaignRow, 'status'>, action: CampaignAction): void {
  const allowed = TRANSITIONS[action].from;
  if (!allowed.includes(row.status)) {
    throw conflict(`cannot ${WHAT[action]} a campaign that is ${row.status}: only a campaign that is ${allowed.join(' or ')} can be`);
  }
}
