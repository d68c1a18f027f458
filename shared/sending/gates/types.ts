// What every outbound gate sees and returns: a send's context in, one decision out (data, never an exception), and how to give back what it counted.
import type { WarmupConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import type { SendCounters } from '../counters.js';
import type { EspHolds } from '../esp-holds.js';
import type { SendLookups } from '../lookups.js';

export interface GateSend {
  tenant: { id: string; status: 'active' | 'suspended'; is_sandbox: boolean };
  /** test keys (mp_test_) simulate; live keys and sessions send. */
  mode: 'live' | 'test';
  /** The recipient, lower-cased. */
  to: string;
  /** The verified sending domain of the From address. */
  domainId: string;
  at: Date;
}

export interface GateDeps {
  db: Queryable;
  /** The warm-up settings the gates read; per_esp_enforce (WARMUP_PER_ESP_ENFORCE) defaults to off. */
  warmup: Pick<WarmupConfig, 'tier_caps' | 'reset_after_idle_days' | 'initial_tier'> & Partial<Pick<WarmupConfig, 'per_esp_enforce'>>;
  /** Batched look-ups (suppression), one query per tick for all concurrent sends. */
  lookups: Pick<SendLookups, 'isSuppressed'>;
  /** Batched counters (quota, warm-up), one statement per tick and kind for all concurrent sends. */
  counters: SendCounters;
  /** The automatic per-provider suppressions in force, cached per process for a few seconds. */
  espHolds: EspHolds;
}

export type GateName = 'suspended' | 'test_key' | 'sandbox' | 'suppression' | 'quota' | 'esp_suppression' | 'warmup' | 'per_esp';

/**
 * Why a gate refused a send, with the figures needed to say so. Protocol-free: each adapter maps it
 * to its own answer (the API to 403 / 402 with quota headers, SMTP submission to 550 / 552 5.2.2).
 */
export type Refusal = { reason: 'tenant_suspended' } | { reason: 'quota_exceeded'; used: number; cap: number };

export type GateDecision =
  | { gate: GateName; outcome: 'continue'; detail?: Record<string, unknown> }
  /** The send is refused: nothing is stored. */
  | { gate: GateName; outcome: 'refuse'; refusal: Refusal }
  /** Accepted and recorded, never delivered. */
  | { gate: GateName; outcome: 'simulate'; reason: 'test_key' | 'sandbox' }
  | { gate: GateName; outcome: 'drop'; reason: 'suppressed' }
  | { gate: GateName; outcome: 'defer'; until: Date; detail?: Record<string, unknown> };

export interface Gate {
  name: GateName;
  decide(deps: GateDeps, send: GateSend): Promise<GateDecision>;
  /**
   * Gives back what a `continue` of this gate counted, for a send that is not stored after all
   * (a later gate refused it, signing or storing failed). Gates that count nothing have none.
   */
  undo?(deps: GateDeps, send: GateSend): Promise<void>;
}
