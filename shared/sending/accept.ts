// The send use-case: accepts one outbound message from any adapter (the API, SMTP submission, system mail): gates, composition, DKIM signing, then the send,
// its events and its delivery job in one transaction.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../db/connection.js';
import { AppError, validationError } from '../kernel/errors.js';
import type { Quota } from '../limits/quota/usage.js';
import type { NewSend, StoredSend } from './outbound-log/queries.js';
import type { SendSource } from './outbound-log/send-sources.js';
import { bounceAddress } from './outbound-log/verp.js';
import { acceptanceEvents, detailOf, quotaOf, recordOf, STATUS_OF } from './acceptance-record.js';
import { composeMessage, type OutboundAttachment } from './compose.js';
import { gateDepsOf, type SendingDeps } from './deps.js';
import { signMessage } from './dkim.js';
import { GateFailure, runGates, undoGates, type GateOutcome } from './gates/pipeline.js';
import type { GateSend, Refusal } from './gates/types.js';
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
  source: SendSource;
  /**
   * The send's id when the caller fixed it beforehand (a campaign recipient's, so a retry after a crash
   * reuses it, and the tracking links composed into the content name it); a new one otherwise.
   */
  sendId?: string | undefined;
  /** A campaign send: the campaign, the A/B variant (null outside the test portion) and the contact. */
  campaign?: { id: string; variant: 'a' | 'b' | null; contactId: string } | undefined;
  /**
   * Over the warm-up cap, hold instead of defer: nothing is stored or counted and the outcome says
   * until when (a campaign waits for the next window instead of writing a deferred send per recipient).
   */
  holdOnDefer?: boolean | undefined;
  /** The From address, normalized (lower-case, A-label domain). */
  from: { address: string; name?: string | undefined };
  /** The one recipient, normalized. */
  to: string;
  content: ComposedContent | RawContent;
}

export interface AcceptResult {
  send: StoredSend;
  /** This month's usage after the send (undefined when the quota gate did not run: test key, sandbox). */
  quota: Quota | undefined;
}

/** A send a gate refused: nothing was stored or counted; each adapter says so in its own protocol. */
export interface Refused {
  refusal: Refusal;
}

/** A send held at the warm-up cap (holdOnDefer): nothing was stored or counted; try again at `until`. */
export interface Held {
  held: { until: Date };
}

export type AcceptOutcome = AcceptResult | Refused;
/** What a send with holdOnDefer may end as. */
export type HoldingOutcome = AcceptOutcome | Held;

export function isRefused<T extends object>(outcome: T | Refused | Held): outcome is Refused {
  return (outcome as Partial<Refused>).refusal !== undefined;
}

export function isHeld<T extends object>(outcome: T | Refused | Held): outcome is Held {
  return (outcome as Partial<Held>).held !== undefined;
}

/** Work that must commit with the send (e.g. the Idempotency-Key answer). */
export type InTransaction = (tx: Queryable, result: AcceptResult) => Promise<void>;

/**
 * The sending domain of a From address. A live send needs a domain that may send: 412
 * no_verified_domain while the tenant has none, 422 naming `field` when the From domain is not
 * one of them. A test-key send never leaves the MTA (spec: "dropped before leaving"), so any
 * domain the tenant has added will do, verified or not: a tenant can try its first send while
 * its DNS records propagate. It is still signed with that domain's key (it has one from the
 * moment it is added), so the stored message is exactly what would have left. A domain the
 * tenant has not added is 422 naming `field` for either kind of key.
 */
async function resolveSendingDomain(
  deps: Pick<SendingDeps, 'lookups'>,
  tenantId: string,
  mode: AcceptInput['mode'],
  fromAddress: string,
  field = 'from_email',
): Promise<string> {
  const domains = await deps.lookups.tenantDomains(tenantId);
  const name = fromAddress.slice(fromAddress.lastIndexOf('@') + 1);
  if (mode === 'test') {
    const added = domains.find((d) => d.name === name);
    if (!added) throw validationError(field, `its domain ${name} is not a domain of this tenant; add it under /domains`);
    return added.id;
  }
  const sending = domains.filter((d) => d.canSend);
  if (sending.length === 0) {
    throw new AppError(
      'no_verified_domain',
      'no sending domain of this tenant has SPF, DKIM and DMARC verified; add and verify one under /domains (a test key may send from an added domain ' +
        'before that)',
    );
  }
  const domain = sending.find((d) => d.name === name);
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
 * Runs the gates and stores the outcome. A gate's refusal (suspended tenant, quota) is returned as
 * data and stores nothing. Whatever the gates counted is given back when storing fails, so a
 * failed request never uses quota or warm-up allowance.
 */
export async function acceptSend(deps: SendingDeps, input: AcceptInput & { holdOnDefer: true }, inTransaction?: InTransaction): Promise<HoldingOutcome>;
export async function acceptSend(deps: SendingDeps, input: AcceptInput, inTransaction?: InTransaction): Promise<AcceptOutcome>;
export async function acceptSend(deps: SendingDeps, input: AcceptInput, inTransaction?: InTransaction): Promise<HoldingOutcome> {
  const domainId = await resolveSendingDomain(deps, input.tenant.id, input.mode, input.from.address);
  const prepared = await prepareSend(deps, input, domainId, inTransaction);
  if (isRefused(prepared) || isHeld(prepared)) return prepared;
  const [row] = await commit(deps, [prepared]);
  return { send: row!, quota: prepared.quota };
}

export interface RecipientsResult {
  accepted: AcceptResult[];
  /** Recipients a gate refused (quota, suspension), each with its refusal. */
  refused: { to: string; refusal: Refusal }[];
}

/**
 * One message to several recipients (SMTP submission): each recipient passes the gates on its
 * own, and the accepted ones are committed in one transaction, so an error after the gates
 * stores none of them and a client that retries the whole message sends nothing twice.
 */
export async function acceptForRecipients(deps: SendingDeps, message: Omit<AcceptInput, 'to'>, recipients: string[]): Promise<RecipientsResult> {
  const domainId = await resolveSendingDomain(deps, message.tenant.id, message.mode, message.from.address, 'From header');
  const prepared: PreparedSend[] = [];
  const refused: RecipientsResult['refused'] = [];
  for (const to of recipients) {
    let outcome: PreparedSend | Refused | Held;
    try {
      // Without holdOnDefer a send is never held.
      outcome = await prepareSend(deps, { ...message, to, holdOnDefer: false }, domainId);
    } catch (err) {
      await Promise.all(prepared.map((p) => p.giveBack()));
      throw err;
    }
    if (isRefused(outcome)) refused.push({ to, refusal: outcome.refusal });
    else if (!isHeld(outcome)) prepared.push(outcome);
  }
  const rows = prepared.length > 0 ? await commit(deps, prepared) : [];
  return { accepted: rows.map((send, i) => ({ send, quota: prepared[i]!.quota })), refused };
}

async function commit(deps: SendingDeps, prepared: PreparedSend[]): Promise<StoredSend[]> {
  try {
    const rows = await deps.writer.write(prepared.map((p) => p.pending));
    // Counted once stored (test-key and sandbox sends too: accepted is what the caller was told).
    deps.metrics?.messages.inc({ outcome: 'accepted' }, rows.length);
    return rows;
  } catch (err) {
    await Promise.all(prepared.map((p) => p.giveBack()));
    throw err;
  }
}

/** Gates, composition and signing for one recipient; on a refusal or failure, what was counted is given back first. */
async function prepareSend(deps: SendingDeps, input: AcceptInput, domainId: string, inTransaction?: InTransaction): Promise<PreparedSend | Refused | Held> {
  const gateDeps = gateDepsOf(deps);
  const gateSend: GateSend = { tenant: input.tenant, mode: input.mode, to: input.to, domainId, at: deps.clock.now() };
  const at = gateSend.at;
  let gates: GateOutcome;
  try {
    gates = await runGates(gateDeps, gateSend);
  } catch (err) {
    if (!(err instanceof GateFailure)) throw err;
    await undoGates(gateDeps, gateSend, err.decisions).catch(() => {});
    throw err.cause;
  }
  const release = () =>
    undoGates(gateDeps, gateSend, gates.decisions).catch((releaseErr: unknown) =>
      deps.log.error({ err: releaseErr }, 'could not give back the quota and warm-up counts of a failed send'),
    );
  const { final } = gates;
  if (final.outcome === 'refuse') {
    await release();
    return { refusal: final.refusal };
  }
  if (final.outcome === 'defer' && input.holdOnDefer) {
    await release();
    return { held: { until: final.until } };
  }
  try {
    const sendId = input.sendId ?? randomUUID();
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
      campaign_id: input.campaign?.id ?? null,
      campaign_variant: input.campaign?.variant ?? null,
      contact_id: input.campaign?.contactId ?? null,
      created_at: at,
    };
    const quota = quotaOf(gates);
    return {
      pending: {
        send,
        events: acceptanceEvents(send, final),
        delivery:
          status === 'queued' || status === 'deferred'
            ? { startAfter: deferUntil, tenant: { status: input.tenant.status, is_sandbox: input.tenant.is_sandbox } }
            : undefined,
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

async function signedMessage(deps: SendingDeps, input: AcceptInput, m: { domainId: string; messageId: string; at: Date }): Promise<Buffer> {
  const c = input.content;
  const bytes = c.kind === 'raw' ? c.bytes : await composeMessage({ ...c, from: input.from, to: input.to, messageId: m.messageId, date: m.at });
  const key = await deps.signingKeys.get(m.domainId);
  if (!key) throw new AppError('internal', 'the sending domain has no active DKIM key');
  const domain = input.from.address.slice(input.from.address.lastIndexOf('@') + 1);
  return signMessage(bytes, { domain, selector: key.selector, privateKey: key.privateKey }, m.at);
}
