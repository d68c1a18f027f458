// The SMTP replies of the submission server, and how the outbound path's refusals (AppErrors) map onto them.
import { AppError } from '../../shared/errors.js';

/** An error smtp-server turns into a reply: `responseCode` is the code, the message the text. */
export interface SmtpError extends Error {
  responseCode: number;
}

/**
 * A reply with its enhanced status code written into the text: smtp-server can only derive
 * enhanced codes from the reply code (550 would always read 5.1.1), so the server keeps its own
 * derivation off and every reply of ours names the precise one (RFC 3463).
 */
export function smtpError(code: number, enhanced: string, text: string): SmtpError {
  return Object.assign(new Error(`${enhanced} ${text}`), { responseCode: code });
}

export function isSmtpError(err: unknown): err is SmtpError {
  return err instanceof Error && typeof (err as Partial<SmtpError>).responseCode === 'number';
}

export const authRequired = () => smtpError(530, '5.7.0', 'Authentication required');
export const keyNoLongerValid = () => smtpError(530, '5.7.0', 'Authentication required: the API key is no longer valid for sending');
export const accountSuspended = () => smtpError(550, '5.7.1', 'account suspended: sending is blocked');
export const temporaryFailure = () => smtpError(451, '4.3.0', 'local error in processing: try again later');
export const shuttingDown = () => smtpError(421, '4.3.2', 'service shutting down, try again later');
export const tooManyRecipients = (max: number) => smtpError(452, '4.5.3', `too many recipients: at most ${max} per message`);
export const messageTooBig = (max: number) => smtpError(552, '5.3.4', `message exceeds the fixed maximum message size of ${max} bytes`);

/**
 * The monthly quota at its cap. 552 5.2.2 (a storage allocation exceeded, permanent): the cap
 * holds until the month ends or the plan changes, so a client queue retrying for days would only
 * delay the bounce the sender needs to see; a permanent reply tells them now.
 */
export const quotaExhausted = (cap: number | undefined) =>
  smtpError(552, '5.2.2', `monthly send quota exhausted${cap === undefined ? '' : ` (cap ${cap})`}: upgrade the plan or wait for next month`);

/** A refusal of the outbound path as a reply; undefined for errors that are not refusals (bugs, outages). */
export function replyForAppError(err: unknown): SmtpError | undefined {
  if (!(err instanceof AppError)) return undefined;
  switch (err.slug) {
    case 'forbidden':
      return accountSuspended();
    case 'quota_exceeded': {
      const cap = Number(err.headers['X-Quota-Cap']);
      return quotaExhausted(Number.isFinite(cap) ? cap : undefined);
    }
    case 'payload_too_large':
      return smtpError(552, '5.3.4', err.message);
    case 'no_verified_domain':
    case 'validation_error':
      return smtpError(550, '5.7.1', err.message);
    default:
      // A 5xx AppError is our fault (e.g. a domain without an active DKIM key): worth a retry.
      return err.status >= 500 ? smtpError(451, '4.3.0', err.message) : smtpError(550, '5.7.1', err.message);
  }
}

/** The reply for an address refused by normalizeEmail (RCPT TO). */
export function badRecipient(err: unknown): SmtpError | undefined {
  return err instanceof AppError ? smtpError(553, '5.1.3', err.message) : undefined;
}
