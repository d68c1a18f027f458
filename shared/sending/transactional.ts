// POST /transactional/send behind the HTTP layer: checks and renders the request, replays Idempotency-Key answers, and hands the message to the accept service.
import { createHash, randomUUID } from 'node:crypto';
import type { Queryable } from '../db/connection.js';
import { AppError, conflict, validationError } from '../kernel/errors.js';
import { monthlyUsage, type Quota } from '../limits/quota/usage.js';
import { answerIdempotencyKey, claimIdempotencyKey, IDEMPOTENCY_CLAIM_LEASE_MS, IDEMPOTENCY_WINDOW_MS, releaseIdempotencyKey } from './outbound-log/queries.js';
import { normalizeEmail } from '../audiences/suppressions/service.js';
import { renderStored } from './templates/service.js';
import { decorateHtml } from '../engagement/tracking/decorate.js';
import { acceptSend, isRefused, type AcceptInput, type ComposedContent, type Refused } from './accept.js';
import { checkBounceRisk } from './bounce-risk.js';
import type { SendingDeps } from './deps.js';
import { checkAttachments, checkBody, checkHeaders, oneLine, type AttachmentInput } from './send-request.js';

export interface TransactionalRequest {
  to: string;
  from_email: string;
  from_name?: string | undefined;
  subject?: string | undefined;
  body_text?: string | undefined;
  body_html?: string | undefined;
  template_id?: string | undefined;
  variables?: Record<string, unknown> | undefined;
  reply_to?: string | undefined;
  headers?: Record<string, string> | undefined;
  attachments?: AttachmentInput[] | undefined;
  bounce_risk_check_enabled?: boolean | undefined;
  /** Opt-in tracking of the HTML body: an open pixel, click redirects (shared/engagement/tracking/decorate.ts). */
  track_opens?: boolean | undefined;
  track_clicks?: boolean | undefined;
}

export interface Caller {
  tenant: AcceptInput['tenant'];
  mode: AcceptInput['mode'];
  apiKeyId: string | null;
}

export interface SendAnswer {
  message_id: string;
  status: string;
}

export interface TransactionalResult {
  httpStatus: number;
  answer: SendAnswer;
  /** Undefined when usage could not be read after the send was committed (headers left out). */
  quota: Quota | undefined;
  /** True when this is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** Key order does not change a request: the hash is over JSON with sorted keys. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** The accepted send (or the stored answer of an earlier request with the same key), or a gate's refusal as data. */
export type TransactionalOutcome = TransactionalResult | Refused;

export async function sendTransactional(
  deps: SendingDeps,
  caller: Caller,
  request: TransactionalRequest,
  idempotencyKey?: string,
): Promise<TransactionalOutcome> {
  if (idempotencyKey === undefined) return send(deps, caller, request);
  const at = deps.clock.now();
  const requestHash = createHash('sha256').update(canonical(request)).digest('hex');
  // Test and live keys never share answers: a live request must not replay a simulated send.
  const key = `${caller.mode}:${idempotencyKey}`;
  const holder = await claimIdempotencyKey(deps.sql, {
    tenantId: caller.tenant.id,
    key,
    requestHash,
    at,
    expiredBefore: new Date(at.getTime() - IDEMPOTENCY_WINDOW_MS),
    abandonedBefore: new Date(at.getTime() - IDEMPOTENCY_CLAIM_LEASE_MS),
  });
  if (holder) {
    if (holder.request_hash !== requestHash) throw conflict('this Idempotency-Key was used with a different request body in the last 24 hours');
    if (holder.status === 0) throw conflict('a request with this Idempotency-Key is still being processed; retry shortly');
    return { httpStatus: holder.status, answer: holder.response as SendAnswer, quota: await usageAfter(deps, caller.tenant.id), replayed: true };
  }
  // Nothing was stored for a refusal or a failure: the key is free again for a retry. If releasing
  // fails too, the claim's lease lets a retry take the key over within a minute.
  const release = () => releaseIdempotencyKey(deps.sql, caller.tenant.id, key).catch(() => {});
  try {
    const outcome = await send(deps, caller, request, async (tx, answer) => {
      await answerIdempotencyKey(tx, { tenantId: caller.tenant.id, key, status: 202, response: answer });
    });
    if (isRefused(outcome)) await release();
    return outcome;
  } catch (err) {
    await release();
    throw err;
  }
}

async function send(
  deps: SendingDeps,
  caller: Caller,
  request: TransactionalRequest,
  remember?: (tx: Queryable, answer: SendAnswer) => Promise<void>,
): Promise<TransactionalOutcome> {
  const to = normalizeEmail(request.to, 'to');
  const from = normalizeEmail(request.from_email, 'from_email');
  const fromName = request.from_name === undefined ? undefined : oneLine(request.from_name, 'from_name', 200);
  const content = await contentOf(deps, caller.tenant.id, to, request);
  if (request.bounce_risk_check_enabled) await checkBounceRisk(deps.sql, deps.dns, caller.tenant.id, to);
  // Tracking links name the send, so its id is fixed before the body is decorated.
  const sendId = randomUUID();
  const trackOpens = request.track_opens === true;
  const trackClicks = request.track_clicks === true;
  if (content.html !== undefined && (trackOpens || trackClicks)) {
    // A test key's send, or a sandbox tenant's, is simulated: no mail leaves, so its links must not be redirects to anywhere.
    const owner = { tenantId: caller.tenant.id, interstitial: caller.mode === 'test' || caller.tenant.is_sandbox };
    content.html = decorateHtml({ html: content.html, sendId, linkKey: deps.linkKey, owner, publicUrl: deps.config.publicUrl, trackOpens, trackClicks });
  }
  const result = await acceptSend(
    deps,
    { tenant: caller.tenant, mode: caller.mode, apiKeyId: caller.apiKeyId, source: 'api', sendId, from: { address: from, name: fromName }, to, content },
    remember ? (tx, r) => remember(tx, answerOf(r.send)) : undefined,
  );
  if (isRefused(result)) return result;
  return {
    httpStatus: 202,
    answer: answerOf(result.send),
    quota: result.quota ?? (await usageAfter(deps, caller.tenant.id)),
    replayed: false,
  };
}

/**
 * The month's usage for the quota headers, read after the send is committed: a failure here must
 * not turn a stored send into an error (the client would retry and send twice), so it is best effort.
 */
async function usageAfter(deps: SendingDeps, tenantId: string): Promise<Quota | undefined> {
  return monthlyUsage(deps.sql, tenantId, deps.clock.now()).catch((err: unknown) => {
    deps.log.warn({ err }, 'quota headers left out: usage could not be read');
    return undefined;
  });
}

const answerOf = (send: { id: string; status: string }): SendAnswer => ({ message_id: send.id, status: send.status });

/** Subject and bodies from the request or from a stored template rendered for this recipient. */
async function contentOf(deps: SendingDeps, tenantId: string, to: string, r: TransactionalRequest): Promise<ComposedContent> {
  const limits = deps.config.limits.send;
  let subject = r.subject;
  let text = r.body_text;
  let html = r.body_html;
  if (r.template_id !== undefined) {
    for (const field of ['subject', 'body_text', 'body_html'] as const) {
      if (r[field] !== undefined) throw validationError(field, 'cannot be given with template_id (the template provides it)');
    }
    const customFields = r.variables?.['custom_fields'];
    const contact = { email: to, custom_fields: customFields !== null && typeof customFields === 'object' ? (customFields as Record<string, unknown>) : {} };
    const rendered = await renderStored(deps.sql, { renderer: deps.renderer, budgetMs: deps.config.render.request_budget_ms }, tenantId, r.template_id, {
      variables: r.variables,
      contact,
    }).catch((err: unknown) => {
      if (err instanceof AppError && err.slug === 'not_found') throw validationError('template_id', 'no such template');
      throw err;
    });
    subject = rendered.subject;
    text = rendered.text ?? undefined;
    html = rendered.html ?? undefined;
  } else if (r.variables !== undefined) {
    throw validationError('variables', 'only apply to a template (give template_id)');
  }
  if (subject === undefined || !subject.trim()) throw validationError('subject', 'is required (or give template_id)');
  if (text === undefined && html === undefined) throw validationError('body_text', 'give body_text, body_html or both (or template_id)');
  return {
    kind: 'compose',
    subject: oneLine(subject, 'subject', limits.max_subject_length),
    text: checkBody(text, 'body_text', limits),
    html: checkBody(html, 'body_html', limits),
    replyTo: r.reply_to === undefined ? undefined : normalizeEmail(r.reply_to, 'reply_to'),
    headers: checkHeaders(r.headers, limits),
    attachments: checkAttachments(r.attachments, limits),
  };
}
