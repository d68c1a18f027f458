// MX plugin `store`, in the queue phase: commits the message, its recipients and their follow-up jobs to PostgreSQL, and only then lets the client have its
// 250.
import { summarizeHeaders } from '../shared/inbound/headers.js';
import { InboundStore, type RecipientTarget } from '../shared/inbound/store.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import { accept, localFailure, type Plugin } from '../mta/hooks/phases.js';

export default function store(deps: MxDeps): Plugin {
  const inbound = new InboundStore(deps.sql, deps.boss, deps.log, deps.config.inbound.store.max_batch);
  return {
    name: 'store',
    hooks: {
      queue: async ({ session, transaction, message, received }) => {
        const recipients: { address: string; target: RecipientTarget }[] = [];
        for (const r of transaction.recipients) {
          // A recipient accepted without a route (a plugin's bug) has nowhere to go: fail closed.
          if (!r.route) {
            session.log.error({ recipient: r.address, message: transaction.id }, 'accepted recipient has no route; message not stored');
            return localFailure();
          }
          const target: RecipientTarget =
            r.route.kind === 'tenant'
              ? { kind: 'tenant', tenantId: r.route.tenantId, mailboxId: r.route.mailboxId, webhook: r.route.webhook }
              : { kind: r.route.kind };
          recipients.push({ address: r.address, target });
        }
        const added = transaction.headers.join('');
        const raw = Buffer.concat([Buffer.from(received + added, 'utf8'), message.bytes]);
        try {
          await inbound.store({
            id: transaction.id,
            receivedAt: deps.clock.now(),
            remoteAddress: session.remoteAddress,
            helo: session.helo ?? null,
            tls: session.secure,
            mailFrom: transaction.mailFrom,
            raw,
            authenticationResults: fieldValue(transaction.headers, 'authentication-results'),
            headers: summarizeHeaders(message.bytes),
            recipients,
          });
        } catch (err) {
          session.log.error({ err, message: transaction.id }, 'storing a received message failed; nothing was stored');
          return localFailure();
        }
        return accept(`2.0.0 Ok: queued as ${transaction.id}`);
      },
    },
  };
}

/** The unfolded value of the first of `fields` named `name`, or null. */
function fieldValue(fields: string[], name: string): string | null {
  const prefix = `${name}:`;
  const field = fields.find((f) => f.slice(0, prefix.length).toLowerCase() === prefix);
  return field === undefined
    ? null
    : field
        .slice(prefix.length)
        .replace(/\r\n[ \t]+/g, ' ')
        .trim();
}
