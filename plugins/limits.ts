// MX plugin `limits`: refuses messages over the size limit (SIZE= at MAIL, the data at DATA), recipients past the per-message maximum, and over-long lines.
import type { MxDeps } from '../mta/inbound/deps.js';
import { defer, proceed, reject, type Plugin } from '../mta/hooks/phases.js';

export default function limits(deps: MxDeps): Plugin {
  const { max_message_bytes: maxBytes, max_recipients: maxRecipients, max_line_length: maxLine } = deps.config.inbound.limits;
  const tooBig = () => reject(552, '5.3.4', `message exceeds the fixed maximum message size of ${maxBytes} bytes`);
  return {
    name: 'limits',
    hooks: {
      // RFC 1870: a client declaring more than the limit is refused before it sends anything.
      mail: ({ transaction }) => {
        const declared = transaction.mailParams['SIZE'];
        return typeof declared === 'string' && Number(declared) > maxBytes ? tooBig() : proceed();
      },
      rcpt: ({ transaction, recipient }) => {
        const key = recipient.address.toLowerCase();
        // A repeated address replaces itself: it does not count twice.
        if (transaction.recipients.some((r) => r.address.toLowerCase() === key)) return proceed();
        // 452 4.5.3 (RFC 5321 §4.5.3.1.10): the client sends the rest in another transaction.
        return transaction.recipients.length >= maxRecipients ? defer(452, '4.5.3', `too many recipients: at most ${maxRecipients} per message`) : proceed();
      },
      data: ({ message }) => {
        if (message.sizeExceeded || message.size > maxBytes) return tooBig();
        if (maxLine !== null && longestLine(message.bytes) > maxLine) return reject(552, '5.3.4', `a line of the message is longer than ${maxLine} bytes`);
        return proceed();
      },
    },
  };
}

/** Bytes of the longest line, without its line ending. */
export function longestLine(bytes: Buffer): number {
  let longest = 0;
  let start = 0;
  while (start <= bytes.length) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline < 0 ? bytes.length : newline;
    const length = end - start - (end > start && bytes[end - 1] === 0x0d ? 1 : 0);
    if (length > longest) longest = length;
    if (newline < 0) break;
    start = newline + 1;
  }
  return longest;
}
