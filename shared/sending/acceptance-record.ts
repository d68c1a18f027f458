// How an accepted send is recorded: its status, its events, its gate decisions as stored, and why it ended as it did.
import type { NewEvent } from '../engagement/events/queries.js';
import type { Quota } from '../limits/quota/usage.js';
import type { NewSend, SendStatus } from './outbound-log/queries.js';
import type { GateOutcome } from './gates/pipeline.js';
import type { GateDecision } from './gates/types.js';

export const STATUS_OF: Record<GateDecision['outcome'], SendStatus> = {
  continue: 'queued',
  defer: 'deferred',
  drop: 'dropped',
  simulate: 'simulated',
  refuse: 'failed',
};

/** The send event (and the deferral or drop that came with it) of a freshly accepted send. */
export function acceptanceEvents(send: NewSend, final: GateDecision): NewEvent[] {
  const base = {
    tenant_id: send.tenant_id,
    send_id: send.id,
    message_id: send.message_id,
    recipient: send.to_email,
    occurred_at: send.created_at,
    campaign_id: send.campaign_id,
    contact_id: send.contact_id,
  };
  if (final.outcome === 'drop') return [{ ...base, type: 'dropped', subtype: null, detail: { reason: final.reason, gate: final.gate } }];
  const events: NewEvent[] = [{ ...base, type: 'send', subtype: null, detail: { status: send.status, mode: send.mode, source: send.source } }];
  if (final.outcome === 'defer') {
    events.push({ ...base, type: 'deferred', subtype: null, detail: { reason: final.gate, until: final.until.toISOString(), ...final.detail } });
  }
  return events;
}

/** A gate decision as stored on the send (a Date is not JSON). */
export function recordOf(d: GateDecision): Record<string, unknown> {
  if (d.outcome === 'refuse') return { gate: d.gate, outcome: d.outcome, ...d.refusal };
  if (d.outcome === 'defer') return { gate: d.gate, outcome: d.outcome, until: d.until.toISOString(), ...(d.detail ? { detail: d.detail } : {}) };
  return { ...d };
}

export function detailOf(d: GateDecision): string | null {
  switch (d.outcome) {
    case 'drop':
      return `dropped by the ${d.gate} gate: the recipient is suppressed`;
    case 'simulate':
      return d.reason === 'test_key'
        ? 'sent with a test key: recorded, never delivered'
        : 'sandbox tenant: recorded in the simulated-sends store, never delivered';
    case 'defer':
      if (d.gate === 'esp_suppression') {
        const provider = String(d.detail?.['provider']);
        return `deferred: ${provider} is refusing this account's mail (automatic per-provider suppression) until ${d.until.toISOString()}`;
      }
      if (d.gate === 'per_esp') return `deferred by the per-ESP warm-up sub-cap (${String(d.detail?.['provider'])}) until ${d.until.toISOString()}`;
      return d.detail?.['paused']
        ? `deferred: the sending domain is paused (warm-up); retried daily until ${d.until.toISOString()}`
        : `deferred by the warm-up gate until ${d.until.toISOString()}`;
    default:
      return null;
  }
}

export function quotaOf(gates: GateOutcome): Quota | undefined {
  const quota = gates.decisions.find((d) => d.gate === 'quota');
  if (quota?.outcome !== 'continue' || !quota.detail) return undefined;
  return { used: quota.detail['used'] as number, cap: quota.detail['cap'] as number };
}
