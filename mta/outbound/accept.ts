// Accepts one outbound message (API send or SMTP submission): gates, composition, DKIM signing, then the send, its events and its delivery job in one transaction.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../shared/db/connection.js';
import { AppError, validationError } from '../../shared/errors.js';
import { releaseQuota, type Quota } from '../../shared/quota/usage.js';
import type { NewSend, SendRow } from '../../shared/sends/queries.js';
import { bounceAddress } from '../../shared/sends/verp.js';
import { releaseDaily } from '../../shared/warmup/queries.js';
import { utcDay } from '../../shared/warmup/tiers.js';
import { acceptanceEvents, detailOf, quotaOf, recordOf, STATUS_OF } from './acceptance-record.js';
import { composeMessage, type OutboundAttachment } from './compose.js';
import type { OutboundDeps } from './deps.js';
import { signMessage } from './dkim.js';
import { GateFailure, runGates, type GateOutcome } from './gates/pipeline.js';
import type { GateDecision, GateSend } from './gates/types.js';
import type { PendingSend } from './send-writer.js';

/** Content the API gives: composed here. */
export interface ComposedContent {
  kind: 'compose';
  subject: string;
  text?: string | undefined;
  html?: string | undefined;
  replyTo?: string | undefined;
  headers?: Record<string, string> | undefined;
  attachments?: OutboundAttachment[] | undefined;
}

/** A message submitted over SMTP, with Message-ID and Date already present. */
export interface RawContent {
  kind: 'raw';
  subject: string;
  bytes: Buffer;
  /** The message's Message-ID, without angle brackets. */
  messageId: string;
}

export interface AcceptInput {
  tenant: GateSend['tenant'];
  mode: 'live' | 'test';
  apiKeyId: string | null;
  source: 'api' | 'smtp';
  /** The From address, normalized (lower-case, A-label domain). */
  from: { address: string; name?: string | undefined };
  /** The one recipient, normalized. */
  to: string;
  content: ComposedContent | RawContent;
}

export interface AcceptResult {
  send: Pick<SendRow, 'id' | 'message_id' | 'status' | 'defer_until'>;
  /** This month's usage after the send (undefined when the quota gate did not run: test key, sandbox). */
  quota: Quota | undefined;
}

/** Work that must commit with the send (e.g. the Idempotency-Key answer). */
export type InTransaction = (tx: Queryable, result: AcceptResult) => Promise<void>;


/**
 * The sending domain of a From address: 412 no_verified_domain while the tenant has no domain
 * that may send, 422 naming `field` when the From domain is not one of them.
 */
async function resolveSendingDomain(deps: Pick<OutboundDeps, 'lookups'>, tenantId: string, fromAddress: string, field = 'from_email'): Promise<string> {
  const domains = await deps.lookups.sendingDomains(tenantId);
  if (domains.length === 0) {
    throw new AppError('no_verified_domain', 'no sending domain of this tenant has SPF, DKIM and DMARC verified; add and verify one under /domains');
  }
  const name = fromAddress.slice(fromAddress.lastIndexOf('@') + 1);
  const domain = domains.find((d) => d.name === name);
  if (!domain) throw validationError(field, `its domain ${name} is not a verified sending domain of this tenant`);
  return domain.id;
}

/** A send through the gates, signed, ready to commit; `giveBack` returns what the gates counted if it never is. */
interface PreparedSend {
  pending: PendingSend;
  quota: Quota | undefined;
  giveBack(): Promise<void>;
}

/**
 * Runs the gates and stores the outcome. Refusals (suspended tenant, quota) throw their AppError
 * and store nothing. Whatever the gates counted is given back when storing fails, so a failed
 * request never uses quota or warm-up allowance.
 */
export async function acceptSend(deps: OutboundDeps, input: AcceptInput, inTransaction?: InTransaction): Promise<AcceptResult> {
  const domainId = await resolveSendingDomain(deps, input.tenant.id, input.from.address);
  const prepared = await prepareSend(deps, input, domainId, inTransaction);
  const [row] = await commit(deps, [prepared]);
  return { send: row!, quota: prepared.quota };
}

export interface RecipientsResult {
  accepted: AcceptResult[];
  /** Recipients a gate refused (quota, suspension), each with its AppError. */
  refused: { to: string; error: AppError }[];
}

/**
 * One message to several recipients (SMTP submission): each recipient passes the gates on its
 * own, and the accepted ones are committed in one transaction, so an error after the gates
 * stores none of them and a client that retries the whole message sends nothing twice.
 */
export async function acceptForRecipients(deps: OutboundDeps, message: Omit<AcceptInput, 'to'>, recipients: string[]): Promise<RecipientsResult> {
  const domainId = await resolveSendingDomain(deps, message.tenant.id, message.from.address, 'From header');
  const prepared: PreparedSend[] = [];
  const refused: RecipientsResult['refused'] = [];
  for (const to of recipients) {
    try {
      prepared.push(await prepareSend(deps, { ...message, to }, domainId));
    } catch (err) {
      if (err instanceof AppError && err.status < 500) {
        refused.push({ to, error: err });
        continue;
      }
      await Promise.all(prepared.map((p) => p.giveBack()));
      throw err;
    }
  }
  const rows = prepared.length > 0 ? await commit(deps, prepared) : [];
  return { accepted: rows.map((send, i) => ({ send, quota: prepared[i]!.quota })), refused };
}

async function commit(deps: OutboundDeps, prepared: PreparedSend[]): Promise<SendRow[]> {
  try {
    return await deps.writer.write(prepared.map((p) => p.pending));
  } catch (err) {
    await Promise.all(prepared.map((p) => p.giveBack()));
    throw err;
  }
}

/** Gates, composition and signing for one recipient; on a refusal or failure, what was counted is given back first. */
async function prepareSend(deps: OutboundDeps, input: AcceptInput, domainId: string, inTransaction?: InTransaction): Promise<PreparedSend> {
  const at = deps.clock.now();
  let gates: GateOutcome;
  try {
    gates = await runGates({ db: deps.sql, warmup: deps.config.warmup, isSuppressed: deps.lookups.isSuppressed, counters: deps.counters }, { tenant: input.tenant, mode: input.mode, to: input.to, domainId, at });
  } catch (err) {
    if (!(err instanceof GateFailure)) throw err;
    await giveBack(deps, input.tenant.id, domainId, at, err.decisions).catch(() => {});
    throw err.cause;
  }
  const { final } = gates;
  if (final.outcome === 'refuse') throw final.error;
  const release = () =>
    giveBack(deps, input.tenant.id, domainId, at, gates.decisions).catch((releaseErr: unknown) =>
      deps.log.error({ err: releaseErr }, 'could not give back the quota and warm-up counts of a failed send'),
    );
  try {
    const sendId = randomUUID();
    const status = STATUS_OF[final.outcome];
    const messageId = input.content.kind === 'raw' ? input.content.messageId : `${sendId}@${deps.config.hostname}`;
    // A dropped message is never delivered: it is neither built nor kept.
    const message = status === 'dropped' ? null : await signedMessage(deps, input, { domainId, messageId, at });
    const maxBytes = deps.config.limits.send.max_message_bytes;
    if (message && message.length > maxBytes) {
      throw new AppError('payload_too_large', `the message is ${message.length} bytes, more than the ${maxBytes} allowed`);
    }
    const deferUntil = final.outcome === 'defer' ? final.until : null;
    const send: NewSend = {
      id: sendId,
      tenant_id: input.tenant.id,
      domain_id: domainId,
      api_key_id: input.apiKeyId,
      source: input.source,
      mode: input.mode,
      status,
      from_email: input.from.address,
      to_email: input.to,
      subject: input.content.subject,
      message_id: messageId,
      envelope_from: bounceAddress(deps.verpKey, sendId, deps.config.hostname),
      gate_decisions: gates.decisions.map(recordOf),
      message,
      defer_until: deferUntil,
      status_detail: detailOf(final),
      created_at: at,
    };
    const quota = quotaOf(gates);
    return {
      pending: {
        send,
        events: acceptanceEvents(send, final),
        delivery: status === 'queued' || status === 'deferred' ? { startAfter: deferUntil } : undefined,
        inTransaction: inTransaction ? (tx, stored) => inTransaction(tx, { send: stored, quota }) : undefined,
      },
      quota,
      giveBack: release,
    };
  } catch (err) {
    await release();
    throw err;
  }
}

async function signedMessage(deps: OutboundDeps, input: AcceptInput, m: { domainId: string; messageId: string; at: Date }): Promise<Buffer> {
  const c = input.content;
  const bytes =
    c.kind === 'raw'
      ? c.bytes
      : await composeMessage({ ...c, from: input.from, to: input.to, messageId: m.messageId, date: m.at });
  const key = await deps.signingKeys.get(m.domainId);
  if (!key) throw new AppError('internal', 'the sending domain has no active DKIM key');
  const domain = input.from.address.slice(input.from.address.lastIndexOf('@') + 1);
  return signMessage(bytes, { domain, selector: key.selector, privateKey: key.privateKey }, m.at);
}

async function giveBack(deps: OutboundDeps, tenantId: string, domainId: string, at: Date, decisions: GateDecision[]): Promise<void> {
  for (const d of decisions) {
    if (d.outcome !== 'continue') continue;
    if (d.gate === 'quota') await releaseQuota(deps.sql, tenantId, at);
    if (d.gate === 'warmup') await releaseDaily(deps.sql, { tenantId, domainId, day: utcDay(at) });
  }
}
