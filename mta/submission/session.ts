// The smtp-server handlers of a submission session: AUTH → MAIL (tenant checks) → RCPT (address, count, quota, rate) → DATA.
import type { TLSSocket } from 'node:tls';
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import { displayPrefixOf } from '../../shared/accounts/keys/secrets.js';
import type { SendingDeps } from '../../shared/sending/deps.js';
import { normalizeEmail } from '../../shared/audiences/suppressions/service.js';
import type { SubmissionAuth, SubmissionRateLimit, Submitter } from './auth.js';
import { submitMessage, type Submitted } from './data.js';
import { accountSuspended, authRequired, badRecipient, keyNoLongerValid, quotaExhausted, tooManyAuthFailures, tooManyRecipients } from './replies.js';
import { isSmtpError, messageTooBig, notReceivedInFull, shuttingDown, smtpError, temporaryFailure } from '../smtp/replies.js';
import { readData } from '../smtp/data.js';
import { observed, SessionLog } from '../smtp/transaction-log.js';
import { NOT_SMTP_COMMANDS } from '../smtp/protocol-replies.js';

export interface SessionContext {
  deps: SendingDeps;
  auth: SubmissionAuth;
  rateLimit: SubmissionRateLimit;
  /** True once stop() was called: new transactions are turned away. */
  stopping(): boolean;
  /** Tracks DATA work so stop() can wait for it. */
  track(work: Promise<unknown>): void;
}

interface SessionState {
  /** Kept to re-read the key at each MAIL: a key revoked or a tenant suspended mid-session stops sending. */
  secret: string;
  submitter: Submitter;
  /** This transaction's recipients, normalized, in RCPT order. */
  recipients: Set<string>;
}

type Handlers = Required<Pick<SMTPServerOptions, 'onConnect' | 'onSecure' | 'onAuth' | 'onMailFrom' | 'onRcptTo' | 'onData' | 'onClose'>>;

/** The handlers shared by both listeners; per-session state lives here, keyed by session id. */
export function sessionHandlers(ctx: SessionContext): Handlers {
  const { deps } = ctx;
  const states = new Map<string, SessionState>();
  // Failed AUTH attempts per session: not reset by STARTTLS, which starts the protocol over, not the count.
  const authFailures = new Map<string, number>();
  const stateOf = (session: SMTPServerSession) => states.get(session.id);
  // The mail log of each session, from its connection to its close (AUTH state comes and goes with STARTTLS).
  const logs = new Map<string, SessionLog>();
  const logOf = (session: SMTPServerSession): SessionLog => {
    let log = logs.get(session.id);
    if (!log) logs.set(session.id, (log = new SessionLog(deps.log, session, true)));
    return log;
  };
  const keyPrefixes = [deps.config.keyPrefixes.live, deps.config.keyPrefixes.test];

  /** Runs a handler body; an SmtpError is the reply, anything else is logged and answered 451. */
  const settle = (work: () => Promise<string | void>, callback: (err?: Error | null, message?: string) => void) => {
    work().then(
      (message) => callback(null, message ?? undefined),
      (err: unknown) => {
        if (isSmtpError(err)) return callback(err);
        deps.log.error({ err }, 'submission handler failed');
        callback(temporaryFailure());
      },
    );
  };

  return {
    onConnect(session, callback) {
      // AUTH carries an API key: not even offered before TLS (RFC 4954 §4), so a client cannot
      // send its key in the clear by mistake; AUTH then is 530 5.7.0 (protocol-replies.ts), and so
      // is MAIL without AUTH (onMailFrom). A session's list replaces the server's.
      if (!session.secure) session.disabledCommands = ['AUTH', ...NOT_SMTP_COMMANDS];
      const refusal = ctx.stopping() ? shuttingDown() : null;
      if (refusal) logOf(session).refused({ code: refusal.responseCode, text: refusal.message });
      callback(refusal);
    },

    onSecure(socket, session, callback) {
      logOf(session).secured(socket as TLSSocket);
      session.disabledCommands = [...NOT_SMTP_COMMANDS];
      // STARTTLS starts the session over (RFC 3207 §4.2): nothing from before it carries on.
      states.delete(session.id);
      callback();
    },

    onAuth(auth, session, callback) {
      const log = logOf(session);
      // At most the key's public prefix, whichever of the two the client put it in; never the secret.
      const failed = (err: Error & { responseCode: number }) => {
        const keyPrefix = displayPrefixOf(auth.password ?? '', keyPrefixes) ?? displayPrefixOf(auth.username ?? '', keyPrefixes) ?? null;
        log.authFailed({ code: err.responseCode, text: err.message }, auth.method, keyPrefix);
        callback(err);
      };
      ctx.auth.check(auth.password ?? '', session.remoteAddress).then(
        (outcome) => {
          if (outcome.error) {
            const failures = (authFailures.get(session.id) ?? 0) + 1;
            authFailures.set(session.id, failures);
            // A client guessing keys gets few tries per connection: the limit's one is 421 (smtp-server closes the connection).
            if (failures >= deps.config.limits.submission.max_auth_failures_per_session) return failed(tooManyAuthFailures());
            return failed(outcome.error);
          }
          log.authenticated(outcome.submitter.keyId);
          states.set(session.id, { secret: auth.password ?? '', submitter: outcome.submitter, recipients: new Set() });
          // smtp-server logs `user.username`: the key id, never the secret.
          callback(null, { user: { username: `key:${outcome.submitter.keyId}` } });
        },
        (err: unknown) => {
          deps.log.error({ err }, 'submission authentication failed');
          failed(smtpError(454, '4.7.0', 'temporary authentication failure: try again later'));
        },
      );
    },

    onMailFrom(address: SMTPServerAddress, session, callback) {
      const log = logOf(session);
      settle(
        async () => {
          // The envelope sender is not checked: outbound mail leaves with a VERP bounce address.
          if (ctx.stopping()) throw shuttingDown();
          const state = stateOf(session);
          if (!state) throw authRequired();
          state.submitter = await fresh(state);
          if (state.submitter.tenant.status === 'suspended') throw accountSuspended();
          state.recipients = new Set();
        },
        observed(callback, (r) => log.mail(address.address ?? '', r)),
      );
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      const log = logOf(session);
      let normalized: string | undefined;
      settle(
        async () => {
          const state = stateOf(session);
          if (!state) throw authRequired();
          let to: string;
          try {
            to = normalizeEmail(address.address, 'recipient');
          } catch (err) {
            throw badRecipient(err) ?? err;
          }
          normalized = to;
          if (state.recipients.has(to)) return;
          const max = deps.config.limits.submission.max_recipients;
          if (state.recipients.size >= max) throw tooManyRecipients(max);
          await checkQuota(state);
          const limited = await ctx.rateLimit.hit(state.submitter);
          if (limited) throw limited;
          state.recipients.add(to);
        },
        observed(callback, (r) => log.rcpt(normalized ?? address.address, r)),
      );
    },

    onData(stream: SMTPServerDataStream, session, callback) {
      const log = logOf(session);
      let size: number | null = null;
      let submitted: Submitted | undefined;
      log.dataStarted();
      const work = (async () => {
        const state = stateOf(session);
        const max = deps.config.limits.send.max_message_bytes;
        let read;
        try {
          read = await readData(stream, max);
        } catch {
          // The client went away mid-message: nothing was handed on, and no one is left to answer.
          throw notReceivedInFull();
        }
        size = read.size;
        if (!state) throw authRequired();
        if (read.sizeExceeded) throw messageTooBig(max);
        // Read again: the gates must see a suspension that happened while the message came in.
        submitted = await submitMessage(deps, await fresh(state), [...state.recipients], read.bytes);
        return submitted.reply;
      })();
      ctx.track(work);
      const stored = () => (submitted ? { send_ids: submitted.sendIds, message_id: submitted.messageId } : undefined);
      settle(
        () => work,
        observed(callback, (r) => log.data(r, size, r.code < 400 ? stored() : undefined), 450),
      );
    },

    onClose(session) {
      logOf(session).closed();
      logs.delete(session.id);
      states.delete(session.id);
      authFailures.delete(session.id);
    },
  };

  /** The session's key read again (cached for credential_cache_ms): revocation and suspension apply mid-session. */
  async function fresh(state: SessionState): Promise<Submitter> {
    const outcome = await ctx.auth.resolve(state.secret);
    if (outcome.error) throw keyNoLongerValid();
    return outcome.submitter;
  }

  /**
   * Refuses a recipient the month's quota cannot cover, counting those already accepted in this
   * message. Only a forecast (a suppressed recipient would not count, other sessions send at the
   * same time): the quota gate at DATA decides, but most refusals can be given per recipient here.
   */
  async function checkQuota(state: SessionState): Promise<void> {
    const { submitter } = state;
    if (submitter.mode === 'test' || submitter.tenant.is_sandbox) return;
    const { used, cap } = await deps.lookups.monthlyUsage(submitter.tenant.id, deps.clock.now());
    if (used + state.recipients.size >= cap) throw quotaExhausted(cap);
  }
}
