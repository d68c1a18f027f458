// Our Received header (RFC 5321 §4.4), the first line of every stored message: who handed it over, to which host, when.
import { isIPv6 } from 'node:net';
import type { SessionInfo, Transaction } from '../hooks/phases.js';

/** The field, folded, ending in CRLF. */
export function receivedHeader(hostname: string, session: SessionInfo, transaction: Transaction, at: Date): string {
  const helo = printable(session.helo ?? '') || 'unknown';
  const literal = isIPv6(session.remoteAddress) ? `[IPv6:${session.remoteAddress}]` : `[${session.remoteAddress}]`;
  const name = printable(session.clientHostname);
  const tcpInfo = name && name !== literal && !name.startsWith('[') ? `${name} ${literal}` : literal;
  // One recipient is named (as most MTAs do); several would show each of them the others, Bcc included.
  const only = transaction.recipients.length === 1 ? `\r\n\tfor <${printable(transaction.recipients[0]!.address)}>` : '';
  // RFC 6531 §3.7.3: a transaction with SMTPUTF8 is "UTF8SMTP" (UTF8SMTPS over TLS).
  const protocol = transaction.mailParams['SMTPUTF8'] ? session.protocol.replace(/^ESMTP/, 'UTF8SMTP') : session.protocol;
  return `Received: from ${helo} (${tcpInfo})\r\n\tby ${hostname} (Mailpath) with ${protocol} id ${transaction.id}${only};\r\n\t${rfc5322Date(at)}\r\n`;
}

/** Without white space, control characters or parentheses (which would open a comment): a client's words must not break the field. */
function printable(text: string): string {
  return text.replace(/[\s\x00-\x1f\x7f-\x9f()]/g, '').slice(0, 255);
}

/** RFC 5322 date-time in UTC: "Tue, 02 Jan 2024 03:04:05 +0000". */
export function rfc5322Date(at: Date): string {
  return at.toUTCString().replace(/GMT$/, '+0000');
}
