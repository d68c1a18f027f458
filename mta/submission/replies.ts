// The SMTP replies of the submission server, and how the send use-case's refusals and errors map onto them.
import { AppError } from '../../shared/kernel/errors.js';
import type { Refusal } from '../../shared/sending/gates/types.js';
import { smtpError, type SmtpError } from '../smtp/replies.js';

export const authRequired = () => smtpError(530, '5.7.0', 'Authentication required');
export const keyNoLongerValid = () => smtpError(530, '5.7.0', 'Authentication required: the API key is no longer valid for sending');
export const accountSuspended = () => smtpError(550, '5.7.1', 'account suspended: sending is blocked');
export const tooManyAuthFailures = () => smtpError(421, '4.7.0', 'too many failed authentication attempts: closing connection');
export const tooManyRecipients = (max: number) => smtpError(452, '4.5.3', `too many recipients: at most ${max} per message`);

/**
 * The monthly quota at its cap. 552 5.2.2 (a storage allocation exceeded, permanent): the cap
 * holds until the month ends or the plan changes, so a client queue retrying for days would only
 * delay the bounce the sender needs to see; a permanent reply tells them now.
 */
export const quotaExhausted = (cap: number) => smtpError(552, '5.2.2', `monthly send quota exhausted (cap ${cap}): upgrade the plan or wait for next month`);

/** A gate's refusal as a reply. */
export function replyForRefusal(refusal: Refusal): SmtpError {
  switch (refusal.reason) {
    case 'tenant_suspended':
      return accountSuspended();
    case 'quota_exceeded':
      return quotaExhausted(refusal.cap);
  }
}

/** An error of the send use-case as a reply; undefined for errors that are not answers (bugs, outages). */
export function replyForAppError(err: unknown): SmtpError | undefined {
  if (!(err instanceof AppError)) return undefined;
  switch (err.slug) {
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
