// The SMTP replies of the MX server: hook decisions turned into smtp-server errors, and the MX's own refusals.
import type { FinalDecision } from '../hooks/phases.js';
import { smtpError, type SmtpError } from '../smtp/replies.js';

/** The error for a refusal (reject or defer); undefined for an acceptance. */
export function errorFor(decision: FinalDecision): SmtpError | undefined {
  return decision.kind === 'accept' ? undefined : smtpError(decision.code, decision.enhanced, decision.text);
}

/** RFC 5321 §4.1.1.11: a parameter the server did not advertise (DSN's NOTIFY/RET, AUTH=, …) is refused, not ignored. */
export const unsupportedParameter = (command: 'MAIL FROM' | 'RCPT TO', name: string) =>
  smtpError(555, '5.5.4', `${command} parameter ${name} is not supported here`);
export const tooManyConnections = () => smtpError(421, '4.7.0', 'too many connections from your address, try again later');
