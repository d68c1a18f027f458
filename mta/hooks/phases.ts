// The hook phases of an MX session, what each phase's handlers are given, and the decisions they return (data, never exceptions).
import type { Logger } from '../../shared/kernel/log.js';
import { LOCAL_ERROR } from '../smtp/replies.js';
import { MX_PHASES } from '../../shared/config/index.js';

export const PHASES = MX_PHASES;
export type Phase = (typeof PHASES)[number];

/**
 * What a handler answers. `continue` passes to the next handler; the others end the phase:
 * `accept` (with an optional reply text), `reject` (a 5xx reply) or `defer` (a 4xx reply), each
 * with its enhanced status code (RFC 3463) and text.
 */
export type Decision =
  | { kind: 'continue' }
  | { kind: 'accept'; text?: string }
  | { kind: 'reject'; code: number; enhanced: string; text: string }
  | { kind: 'defer'; code: number; enhanced: string; text: string };

/** A decision that ends a phase. */
export type FinalDecision = Exclude<Decision, { kind: 'continue' }>;

const CONTINUE: Decision = Object.freeze({ kind: 'continue' });
export const proceed = (): Decision => CONTINUE;
export const accept = (text?: string): FinalDecision => (text === undefined ? { kind: 'accept' } : { kind: 'accept', text });
export const reject = (code: number, enhanced: string, text: string): FinalDecision => ({ kind: 'reject', code, enhanced, text });
export const defer = (code: number, enhanced: string, text: string): FinalDecision => ({ kind: 'defer', code, enhanced, text });

/** Our failure (a handler that threw or timed out, a store that failed): the client retries later. */
export const localFailure = (): FinalDecision => defer(LOCAL_ERROR.code, LOCAL_ERROR.enhanced, LOCAL_ERROR.text);

/** What a phase answers when no handler decided: mail is never accepted by default. */
export const PHASE_DEFAULTS: Readonly<Record<Phase, FinalDecision>> = {
  connect: accept(),
  helo: accept(),
  mail: accept(),
  rcpt: reject(550, '5.7.1', 'relay access denied'),
  data: accept(),
  queue: defer(451, '4.3.0', 'the message could not be queued: try again later'),
};

/** The SMTP client as the session knows it. */
export interface SessionInfo {
  id: string;
  remoteAddress: string;
  remotePort: number;
  /** The reverse name when known, else the address in brackets. */
  clientHostname: string;
  secure: boolean;
  /** The EHLO/HELO name, once given. */
  helo: string | undefined;
  /** ESMTP, ESMTPS, UTF8SMTPS ... (RFC 3848), for the Received header. */
  protocol: string;
  log: Logger;
}

/** Where an accepted recipient's copy goes. */
export type RecipientRoute =
  /** An address of a tenant: a workspace mailbox and/or the tenant's inbound webhook. */
  | { kind: 'tenant'; tenantId: string; mailboxId: string | null; webhook: boolean }
  /** One of our own addresses: a VERP bounce address (its send) or the feedback-loop address (null). */
  | { kind: 'bounce'; sendId: string | null }
  /** A send's signed mailto unsubscribe address (List-Unsubscribe): applied like its https link. */
  | { kind: 'unsubscribe'; sendId: string };

export interface Recipient {
  /** As the client gave it, domain in lower-case A-label form. */
  address: string;
  /** The source route the client put before the address (`@a,@b:`), which the server would ignore. */
  sourceRoute: string | undefined;
  /** Set by the plugin that accepts the recipient. */
  route?: RecipientRoute;
}

export interface Transaction {
  /** The id the message is stored under (inbound_messages.id), known from MAIL on. */
  id: string;
  /** The envelope sender; '' for the null sender of bounces. */
  mailFrom: string;
  /** MAIL FROM parameters (SIZE, BODY, SMTPUTF8 ...), names upper-cased. */
  mailParams: Record<string, string | true>;
  /** The accepted recipients, in RCPT order. */
  recipients: Recipient[];
  /** Header fields to prepend below our Received header (Authentication-Results), each ending in CRLF. */
  headers: string[];
}

export interface ReceivedMessage {
  /** The client's bytes (dot-unstuffed); empty when the message ran over the size limit. */
  bytes: Buffer;
  /** How many bytes the client sent. */
  size: number;
  /** True when it ran over the limit: the bytes were counted, not kept. */
  sizeExceeded: boolean;
}

export interface PhaseContexts {
  connect: { session: SessionInfo };
  helo: { session: SessionInfo; helo: string };
  mail: { session: SessionInfo; transaction: Transaction };
  rcpt: { session: SessionInfo; transaction: Transaction; recipient: Recipient };
  data: { session: SessionInfo; transaction: Transaction; message: ReceivedMessage };
  /** `received` is our Received header field (ending in CRLF), the first line of the stored message. */
  queue: { session: SessionInfo; transaction: Transaction; message: ReceivedMessage; received: string };
}

/**
 * A handler may answer at once or later. `signal` aborts when the runner stops waiting (timeout);
 * only a handler that declares the parameter gets a live one (making one per call costs time).
 */
export type Handler<P extends Phase> = (ctx: PhaseContexts[P], signal: AbortSignal) => Decision | Promise<Decision>;

export type PhaseHandlers = { [P in Phase]?: Handler<P> };

/** A plugin: its handlers per phase, and what to release when the server stops. */
export interface Plugin {
  name: string;
  hooks: PhaseHandlers;
  close?(): Promise<void>;
}
