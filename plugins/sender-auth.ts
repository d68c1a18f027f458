// MX plugin `sender-auth`: evaluates SPF, DKIM and DMARC with mailauth and records them in an Authentication-Results header; informative only, it never refuses
// a message.
import { authenticate, type DNSResolver } from 'mailauth';
import type { MxDeps } from '../mta/inbound/deps.js';
import { mailauthResolver } from '../mta/inbound/auth-resolver.js';
import { proceed, type Plugin } from '../mta/hooks/phases.js';

export default function senderAuth(deps: MxDeps): Plugin {
  const { config } = deps;
  const settings = config.inbound.sender_auth;
  const resolver = mailauthResolver(deps.dns, { ttlMs: settings.dns_cache_seconds * 1000, maxEntries: settings.dns_cache_entries }) as DNSResolver;
  // Finish well inside the hook timeout: a slow DNS must end in temperror, never in a 451 (fail closed).
  const dataTimeout = config.plugins.phase_timeout_ms.data ?? config.plugins.hook_timeout_ms;
  const deadlineMs = Math.max(1, Math.min(settings.timeout_ms, Math.floor(dataTimeout * 0.8)));
  const host = config.hostname;

  return {
    name: 'sender-auth',
    hooks: {
      data: async ({ session, transaction, message }) => {
        if (message.sizeExceeded) return proceed();
        let header: string;
        try {
          const result = await withDeadline(
            authenticate(message.bytes, {
              ip: session.remoteAddress,
              helo: session.helo ?? session.remoteAddress,
              sender: transaction.mailFrom,
              mta: host,
              resolver,
              minBitLength: settings.min_key_bits,
              // Only SPF, DKIM and DMARC are asked for: ARC would double the cost of every message.
              disableArc: true,
              disableBimi: true,
            }),
            deadlineMs,
          );
          header = authenticationResults(result.headers) ?? unfinished(host, 'no result');
        } catch (err) {
          // The spec: inbound mail is untrusted and these checks are not enforced. A DNS outage or a
          // message mailauth cannot read is recorded as such, and the message goes on.
          session.log.warn({ err, message: transaction.id }, 'sender authentication did not finish');
          header = unfinished(host, err instanceof DeadlineError ? 'checks timed out' : 'checks failed');
        }
        transaction.headers.push(header);
        return proceed();
      },
    },
  };
}

/** The Authentication-Results field among the headers mailauth proposes (it also offers Received-SPF), ending in CRLF. */
export function authenticationResults(headers: string): string | undefined {
  const lines = headers.split('\r\n');
  const start = lines.findIndex((l) => /^Authentication-Results:/i.test(l));
  if (start < 0) return undefined;
  let end = start + 1;
  while (end < lines.length && /^[ \t]/.test(lines[end]!)) end++;
  return `${lines.slice(start, end).join('\r\n')}\r\n`;
}

/** RFC 8601 §2.7: temperror says a transient failure kept the check from completing. */
function unfinished(host: string, why: string): string {
  return `Authentication-Results: ${host};\r\n spf=temperror (${why});\r\n dkim=temperror (${why});\r\n dmarc=temperror (${why})\r\n`;
}

class DeadlineError extends Error {
  override name = 'DeadlineError';
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DeadlineError(`not finished within ${ms} ms`)), ms)));
  work.catch(() => undefined); // a late failure after the deadline is of no interest
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
