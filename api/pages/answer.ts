// A page's answer (status, HTML, extra headers) and the answers shared by the account pages: too many attempts, and any other refusal or failure.
import type { AppError } from '../../shared/kernel/errors.js';
import { notice, renderPage } from './html.js';

export interface PageAnswer {
  status: number;
  html: string;
  /** E.g. Retry-After on 429. */
  headers?: Record<string, string>;
}

/** The 429 of the public rate limit or the sign-in throttle, in words, with its wait. */
export function tooManyAttempts(err: AppError): string {
  const seconds = Number(err.headers['Retry-After']);
  const wait = Number.isFinite(seconds) && seconds > 0 ? `${seconds} second${seconds === 1 ? '' : 's'}` : 'a while';
  return `Too many attempts from your network. Wait ${wait}, then try again.`;
}

/**
 * A page for a refusal raised outside the page's own handling (the request guard's rate limit, an unreadable body,
 * a domain refusal the page has no words of its own for) or a failure (500, no detail: it is logged).
 */
export function problemPage(status: number, err: AppError | undefined): PageAnswer {
  if (status === 429 && err) {
    return { status, headers: err.headers, html: renderPage('Please wait', notice('problem', 'Too many attempts', tooManyAttempts(err))) };
  }
  if (status >= 500) {
    const text = 'Something went wrong on our side and nothing was changed. Try again in a moment.';
    return { status, html: renderPage('Something went wrong', notice('problem', 'Server error', text)) };
  }
  const text = err ? `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.` : 'The form could not be read. Open the link from the e-mail again.';
  return { status, headers: err?.headers ?? {}, html: renderPage('That did not work', notice('problem', 'Nothing was changed', text)) };
}
