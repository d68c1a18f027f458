// MX plugin `recipient-domains`: accepts a recipient only when it is ours (a tenant address, a workspace mailbox, a bounce, feedback-loop or unsubscribe address); never an open relay.
import DataLoader from 'dataloader';
import { recipientFacts, type RecipientFacts } from '../shared/inbound/queries.js';
import { sendIdOfBounce } from '../shared/sends/verp.js';
import { sendIdOfUnsubscribeAddress } from '../shared/tracking/link-tokens.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import { accept, reject, type Plugin } from '../mta/hooks/phases.js';

/** Characters that make a local part route somewhere else on some MTAs (`user%other@`, `other!user@`, `"a@b"@`). */
const ROUTING_CHARACTERS = /[%!@]/;

export default function recipientDomains(deps: MxDeps): Plugin {
  const host = deps.config.hostname;
  const feedbackLoop = deps.config.inbound.recipient_domains.feedback_loop_local_part;
  const relayDenied = (why = 'relay access denied') => reject(550, '5.7.1', why);
  const noSuchUser = () => reject(550, '5.1.1', 'no such recipient here');
  // The RCPTs of concurrent sessions read in the same turn of the event loop (each session's
  // socket is its own callback) share one query; nothing is cached.
  const facts = new DataLoader<string, RecipientFacts>(
    (addresses) => recipientFacts(deps.sql, addresses.map((address) => ({ address, domain: address.slice(address.lastIndexOf('@') + 1) }))),
    { cache: false, maxBatchSize: 200, batchScheduleFn: (run) => setImmediate(run) },
  );
  return {
    name: 'recipient-domains',
    hooks: {
      rcpt: async ({ recipient, session }) => {
        if (recipient.sourceRoute !== undefined) return relayDenied('relay access denied: source routes are not accepted');
        const at = recipient.address.lastIndexOf('@');
        // The domainless <postmaster> (RFC 5321 §4.1.1.3): there is no postmaster mailbox to hold it.
        if (at <= 0) return noSuchUser();
        const local = recipient.address.slice(0, at);
        const domain = recipient.address.slice(at + 1);
        if (ROUTING_CHARACTERS.test(local)) return relayDenied('relay access denied: routing characters in the local part');

        if (domain === host) {
          const sendId = sendIdOfBounce(deps.verpKey, recipient.address, host);
          if (sendId !== undefined) {
            recipient.route = { kind: 'bounce', sendId };
            return accept();
          }
          if (local.toLowerCase() === feedbackLoop) {
            recipient.route = { kind: 'bounce', sendId: null };
            return accept();
          }
          // u-<token>: a List-Unsubscribe mailto address. A token that does not verify names nobody: refused here.
          const unsubscribeSend = sendIdOfUnsubscribeAddress(deps.linkKey, recipient.address, host);
          if (unsubscribeSend !== undefined) {
            recipient.route = { kind: 'unsubscribe', sendId: unsubscribeSend };
            return accept();
          }
          return noSuchUser();
        }

        const known = await facts.load(`${local.toLowerCase()}@${domain}`);
        if (known.mailboxId !== null && known.mailboxTenantId !== null) {
          // A workspace mailbox receives even before its domain's MX is verified; the webhook only once it is.
          const webhook = known.mxVerified && known.webhookEnabled && known.domainTenantId === known.mailboxTenantId;
          recipient.route = { kind: 'tenant', tenantId: known.mailboxTenantId, mailboxId: known.mailboxId, webhook };
          return accept();
        }
        if (known.domainTenantId !== null && known.mxVerified) {
          if (!known.webhookEnabled) return noSuchUser();
          recipient.route = { kind: 'tenant', tenantId: known.domainTenantId, mailboxId: null, webhook: true };
          return accept();
        }
        // A foreign domain, or a tenant domain whose MX does not point at us (yet): not ours to take.
        session.log.debug({ recipient: recipient.address }, 'relay refused');
        return relayDenied();
      },
    },
  };
}
