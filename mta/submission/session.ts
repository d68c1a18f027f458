// The smtp-server handlers of a submission session: AUTH → MAIL (tenant checks) → RCPT (address, count, quota, rate) → DATA.
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { SendingDeps } from '../../shared/sending/deps.js';
import { normalizeEmail } from '../../shared/suppressions/service.js';
import type { SubmissionAuth, SubmissionRateLimit, Submitter } from './auth.js';
import { readMessage, submitMessage } from './data.js';
import { accountSuspended, authRequired, badRecipient, keyNoLongerValid, quotaExhausted, tooManyAuthFailures, tooManyRecipients } from './replies.js';
import { isSmtpError, messageTooBig, notReceivedInFull, shuttingDown, smtpError, temporaryFailure } from '../smtp/replies.js';

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
      // send its key in the clear by mistake. MAIL without AUTH still gets 530 (onMailFrom).
      if (!session.secure) session.disabledCommands = ['AUTH'];
      callback(ctx.stopping() ? shuttingDown() : null);
    },

    onSecure(_socket, session, callback) {
      session.disabledCommands = [];
      // STARTTLS starts the session over (RFC 3207 §4.2): nothing from before it carries on.
      states.delete(session.id);
      callback();
    },

    onAuth(auth, session, callback) {
      ctx.auth.check(auth.password ?? '', session.remoteAddress).then(
        (outcome) => {
          if (outcome.error) {
            const failures = (authFailures.get(session.id) ?? 0) + 1;
            authFailures.set(session.id, failures);
            // A client guessing keys gets few tries per connection: the limit's one is 421 (smtp-server closes the connection).
            if (failures >= deps.config.limits.submission.max_auth_failures_per_session) return callback(tooManyAuthFailures());
            return callback(outcome.error);
          }
          states.set(session.id, { secret: auth.password ?? '', submitter: outcome.submitter, recipients: new Set() });
          // smtp-server logs `user.username`: the key id, never the secret.
          callback(null, { user: { username: `key:${outcome.submitter.keyId}` } });
        },
        (err: unknown) => {
          deps.log.error({ err }, 'submission authentication failed');
          callback(smtpError(454, '4.7.0', 'temporary authentication failure: try again later'));
        },
      );
    },

    onMailFrom(_address: SMTPServerAddress, session, callback) {
      settle(async () => {
        // The envelope sender is not checked: outbound mail leaves with a VERP bounce address.
        if (ctx.stopping()) throw shuttingDown();
        const state = stateOf(session);
        if (!state) throw authRequired();
        state.submitter = await fresh(state);
        if (state.submitter.tenant.status === 'suspended') throw accountSuspended();
        state.recipients = new Set();
      }, callback);
    },

    onRcptTo(address: SMTPServerAddress, session, callback) {
      settle(async () => {
        const state = stateOf(session);
        if (!state) throw authRequired();
        let to: string;
        try {
          to = normalizeEmail(address.address, 'recipient');
        } catch (err) {
          throw badRecipient(err) ?? err;
        }
        if (state.recipients.has(to)) return;
        const max = deps.config.limits.submission.max_recipients;
        if (state.recipients.size >= max) throw tooManyRecipients(max);
        await checkQuota(state);
        const limited = await ctx.rateLimit.hit(state.submitter);
        if (limited) throw limited;
        state.recipients.add(to);
      }, callback);
    },

    onData(stream: SMTPServerDataStream, session, callback) {
      const work = (async () => {
        const state = stateOf(session);
        const max = deps.config.limits.send.max_message_bytes;
        let data: Buffer | undefined;
        try {
          data = await readMessage(stream, max);
        } catch {
          // The client went away mid-message: nothing was handed on, and no one is left to answer.
          throw notReceivedInFull();
        }
        if (!state) throw authRequired();
        if (data === undefined) throw messageTooBig(max);
        // Read again: the gates must see a suspension that happened while the message came in.
        return submitMessage(deps, await fresh(state), [...state.recipients], data);
      })();
      ctx.track(work);
      settle(() => work, callback);
    },

    onClose(session) {
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
