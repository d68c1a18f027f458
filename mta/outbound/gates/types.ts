// What every outbound gate sees and returns: a send's context in, one decision out (data, never an exception).
import type { WarmupConfig } from '../../../shared/config.js';
import type { Queryable } from '../../../shared/db/connection.js';
import type { AppError } from '../../../shared/errors.js';
import type { SendCounters } from '../counters.js';

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
  warmup: WarmupConfig;
  /** Batched suppression look-ups (mta/outbound/lookups.ts); one query per send without. */
  isSuppressed?: ((tenantId: string, email: string) => Promise<boolean>) | undefined;
  /** Batched counters (mta/outbound/counters.ts); one statement per send and counter without. */
  counters?: SendCounters | undefined;
}

export type GateName = 'suspended' | 'test_key' | 'sandbox' | 'suppression' | 'quota' | 'warmup';

export type GateDecision =
  | { gate: GateName; outcome: 'continue'; detail?: Record<string, unknown> }
  /** The request is refused with this error (suspended 403, quota 402). */
  | { gate: GateName; outcome: 'refuse'; error: AppError }
  /** Accepted and recorded, never delivered. */
  | { gate: GateName; outcome: 'simulate'; reason: 'test_key' | 'sandbox' }
  | { gate: GateName; outcome: 'drop'; reason: 'suppressed' }
  | { gate: GateName; outcome: 'defer'; until: Date; detail?: Record<string, unknown> };

export type Gate = (deps: GateDeps, send: GateSend) => Promise<GateDecision>;
