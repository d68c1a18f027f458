// The SMTP replies of the MX server: hook decisions turned into smtp-server errors, with the enhanced status code written into the text.
import type { FinalDecision } from '../hooks/phases.js';

/** An error smtp-server turns into a reply: `responseCode` is the code, the message the text. */
export interface SmtpError extends Error {
  responseCode: number;
}

/**
 * smtp-server derives enhanced codes from the reply code alone (550 would always read 5.1.1), so
 * its derivation stays off and each reply names the precise one itself (RFC 3463).
 */
export function smtpError(code: number, enhanced: string, text: string): SmtpError {
  return Object.assign(new Error(`${enhanced} ${text}`), { responseCode: code });
}

/** The error for a refusal (reject or defer); undefined for an acceptance. */
export function errorFor(decision: FinalDecision): SmtpError | undefined {
  return decision.kind === 'accept' ? undefined : smtpError(decision.code, decision.enhanced, decision.text);
}

/** RFC 5321 §4.1.1.11: a parameter the server did not advertise (DSN's NOTIFY/RET, AUTH=, …) is refused, not ignored. */
export const unsupportedParameter = (command: 'MAIL FROM' | 'RCPT TO', name: string) => smtpError(555, '5.5.4', `${command} parameter ${name} is not supported here`);
export const shuttingDown = () => smtpError(421, '4.3.2', 'service shutting down, try again later');
export const notReceivedInFull = () => smtpError(451, '4.3.0', 'the message was not received in full');
export const messageTooBig = (max: number) => smtpError(552, '5.3.4', `message exceeds the fixed maximum message size of ${max} bytes`);
