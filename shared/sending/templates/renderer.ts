// The port through which tenant Liquid is rendered: a job of sources and contexts, run off the caller's event loop (main/render-pool.ts runs jobs on worker
// threads) within a time budget.
import { AppError, validationError } from '../../kernel/errors.js';
import type { TemplateContext, TemplatePart } from './liquid.js';

/** One Liquid source of a job; `field` is what errors name (subject_b is rendered as a subject). */
export interface LiquidSource {
  field: string;
  part: TemplatePart;
  source: string;
}

/** One context to render some of the job's sources for (indices into RenderJob.sources, in order). */
export interface RenderItem {
  context: TemplateContext;
  sources: number[];
}

/**
 * Sources cross to a render thread as text (parsed templates cannot), with every context; the thread keeps the
 * parsed templates of recent sources. Many items per job keep the per-job cost small (a campaign batch's recipients).
 */
export interface RenderJob {
  /** Whose templates: the pool shares its threads fairly between tenants. */
  tenantId: string;
  sources: LiquidSource[];
  items: RenderItem[];
  /** The render time the whole job may use, in ms: past it the remaining items fail over budget, and a job still running shortly after is stopped. */
  budgetMs: number;
}

/** One item's renders in order, or why it failed (overBudget: a limit stopped it, not the recipient's data). */
export type ItemOutcome = { ok: true; outputs: string[] } | { ok: false; field: string; message: string; overBudget: boolean };

export interface RenderReport {
  items: ItemOutcome[];
  /** The render time the job used, in ms. */
  elapsedMs: number;
}

export interface RenderOptions {
  /**
   * Refuse instead of queueing past the tenant's queue bound (a request: 429 with Retry-After); a campaign batch
   * waits its turn instead.
   */
  shed?: boolean;
}

export interface TemplateRenderer {
  render(job: RenderJob, options?: RenderOptions): Promise<RenderReport>;
  close(): Promise<void>;
}

/** A failed item as the 422 a caller answers (the message names the part and the limit or the error). */
export function itemError(outcome: Extract<ItemOutcome, { ok: false }>): AppError {
  const problem = outcome.message.startsWith(`${outcome.field}: `) ? outcome.message.slice(outcome.field.length + 2) : outcome.message;
  return validationError(outcome.field, problem);
}

/** An item's outputs, or its failure thrown as a 422. */
export function outputsOf(outcome: ItemOutcome): string[] {
  if (!outcome.ok) throw itemError(outcome);
  return outcome.outputs;
}

/** The failure of an item a job could not reach within its budget. */
export const overBudget = (field: string, budgetMs: number): Extract<ItemOutcome, { ok: false }> => ({
  ok: false,
  field,
  message: `${field}: rendering exceeded its time budget of ${budgetMs} ms and was stopped`,
  overBudget: true,
});

/** The refusal of a render request when the tenant already has as many renders queued as it may. */
export const renderBusy = (retryAfterSeconds: number) =>
  new AppError('rate_limited', 'too many template renders of this tenant are in progress; retry later', {
    headers: { 'Retry-After': String(retryAfterSeconds) },
  });
