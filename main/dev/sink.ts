// The dev mail sink: a catch-all SMTP server on loopback that accepts every message Mailpath delivers (dev mode relays all outbound mail to it), checks its
// DKIM signature and DMARC through the dev DNS, and keeps it for the inbox listing.
import { authenticate, type DNSResolver } from 'mailauth';
import { SMTPServer } from 'smtp-server';
import { mailauthResolver } from '../../mta/inbound/auth-resolver.js';
import { readData } from '../../mta/smtp/data.js';
import type { DnsResolver } from '../../shared/kernel/dns.js';
import type { Logger } from '../../shared/kernel/log.js';
import { summarize, type DevStore } from './store.js';

/** Larger than anything Mailpath sends (limits.yaml send.max_message_bytes), so the sink never refuses what would have left. */
const MAX_BYTES = 64 * 1024 * 1024;

export interface DevSink {
  port: number;
  stop(): Promise<void>;
}

/** DKIM and DMARC verdicts as one word each plus what they were about, e.g. "pass (d=acme.localhost s=mp20261121)". */
async function verdicts(raw: Buffer, mailFrom: string, resolver: DNSResolver, hostname: string): Promise<{ dkim: string; dmarc: string }> {
  try {
    const result = await authenticate(raw, {
      ip: '127.0.0.1',
      helo: hostname,
      sender: mailFrom,
      mta: 'sink.localhost',
      resolver,
      disableArc: true,
      disableBimi: true,
    });
    const first = result.dkim.results[0];
    const dkim = first ? `${first.status.result} (d=${first.signingDomain}${first.selector ? ` s=${first.selector}` : ''})` : 'none';
    const dmarc = result.dmarc ? result.dmarc.status.result : 'none';
    return { dkim, dmarc };
  } catch (err) {
    return { dkim: `temperror (${(err as Error).message})`, dmarc: 'temperror' };
  }
}

export async function startDevSink(
  deps: { store: DevStore; dns: DnsResolver; hostname: string; log: Logger },
  port: number,
  host = '127.0.0.1',
): Promise<DevSink> {
  const resolver = mailauthResolver(deps.dns, { ttlMs: 0, maxEntries: 1 }) as DNSResolver;
  const server = new SMTPServer({
    name: 'sink.localhost',
    banner: 'Mailpath dev sink: every message is caught, none goes further',
    // Mailpath delivers without AUTH; plain text is fine on loopback.
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: MAX_BYTES,
    logger: false,
    onData(stream, session, callback) {
      void (async () => {
        const read = await readData(stream, MAX_BYTES);
        if (read.sizeExceeded) return callback(Object.assign(new Error('message too large for the dev sink'), { responseCode: 552 }));
        const mailFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const [summary, checks] = await Promise.all([
          summarize(read.bytes),
          verdicts(read.bytes, mailFrom, resolver, session.hostNameAppearsAs ?? 'localhost'),
        ]);
        const caught = deps.store.addMessage({
          received_at: new Date(),
          mail_from: mailFrom,
          rcpt_to: session.envelope.rcptTo.map((r) => r.address),
          raw: read.bytes,
          ...summary,
          ...checks,
        });
        deps.log.info({ id: caught.id, from: caught.mail_from, to: caught.rcpt_to, subject: caught.subject, dkim: caught.dkim }, 'dev sink caught a message');
        callback(null, `Ok: caught as ${caught.id}`);
      })().catch((err: unknown) => callback(err as Error));
    },
  });
  server.on('error', (err) => deps.log.warn({ err }, 'dev sink'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(port, host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const address = server.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
