// Runs the outbound gates in the design's order, stops at the first decision that is not "continue", and gives back what they counted for a send that is not
// stored.
import { quotaGate } from './quota.js';
import { sandboxGate } from './sandbox.js';
import { suppressionGate } from './suppression.js';
import { suspendedGate } from './suspended.js';
import { testKeyGate } from './test-key.js';
import type { Gate, GateDecision, GateDeps, GateSend } from './types.js';
import { warmupGate } from './warmup.js';
import { perEspGate } from './per-esp.js';
import { espSuppressionGate } from './esp-suppression.js';

/**
 * suspended → test key → sandbox → suppression → quota → per-provider suppression → per-ESP sub-cap → warm-up
 * (design: the mail path). The deferring gates come after the quota, which counts a deferred send at acceptance (it
 * will be sent; its wake-up passes the warm-up gate only), and before the warm-up gate, so that a send they defer
 * never takes a warm-up allowance.
 */
export const GATES: readonly Gate[] = [suspendedGate, testKeyGate, sandboxGate, suppressionGate, quotaGate, espSuppressionGate, perEspGate, warmupGate];

/**
 * The gates judged again when a queued send is delivered: what can change between acceptance and delivery (a tenant
 * suspended or put in the sandbox, a recipient suppressed meanwhile). The counting gates are not run twice; a warm-up
 * deferral's wake-up passes the warm-up gate on its own.
 */
export const DELIVERY_GATES: readonly Gate[] = [suspendedGate, sandboxGate, suppressionGate];

export interface GateOutcome {
  /** The deciding gate's decision: continue when every gate let the send through. */
  final: GateDecision;
  /** Every gate that ran, in order, for the send's record. */
  decisions: GateDecision[];
}

/** A gate threw (the database failed): carries what the gates before it decided, so their counts can be given back. */
export class GateFailure extends Error {
  override name = 'GateFailure';
  constructor(
    override readonly cause: unknown,
    readonly decisions: GateDecision[],
  ) {
    super(`an outbound gate failed: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export async function runGates(deps: GateDeps, send: GateSend, gates: readonly Gate[] = GATES): Promise<GateOutcome> {
  const decisions: GateDecision[] = [];
  for (const gate of gates) {
    let decision: GateDecision;
    try {
      decision = await gate.decide(deps, send);
    } catch (err) {
      throw new GateFailure(err, decisions);
    }
    decisions.push(decision);
    if (decision.outcome !== 'continue') return { final: decision, decisions };
  }
  return { final: decisions[decisions.length - 1] ?? { gate: 'warmup', outcome: 'continue' }, decisions };
}

/** Undoes, in reverse order, what each gate that let the send through counted (quota, warm-up allowance). */
export async function undoGates(deps: GateDeps, send: GateSend, decisions: readonly GateDecision[], gates: readonly Gate[] = GATES): Promise<void> {
  for (const decision of [...decisions].reverse()) {
    if (decision.outcome !== 'continue') continue;
    await gates.find((g) => g.name === decision.gate)?.undo?.(deps, send);
  }
}
