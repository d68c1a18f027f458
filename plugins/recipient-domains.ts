// MX plugin `recipient-domains`: accepts a recipient only when it is ours (a tenant address, a workspace mailbox, a bounce, feedback-loop, postmaster or
// unsubscribe address); never an open relay.
import { GroupCommit, READS_IN_FLIGHT } from '../shared/db/group-commit.js';
import { recipientFacts, type RecipientFacts } from '../shared/inbound/queries.js';
import { sendIdOfBounce } from '../shared/sending/outbound-log/verp.js';
import { sendIdOfUnsubscribeAddress } from '../shared/engagement/tracking/link-tokens.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import { accept, reject, type Plugin } from '../mta/hooks/phases.js';

/** Characters that make a local part route somewhere else on some MTAs (`user%other@`, `other!user@`, `"a@b"@`). */
const ROUTING_CHARACTERS = /[%!@]/;

/**
 * RFC 5321 §4.5.1: `postmaster` (any case) must be accepted without a domain and at every domain we
 * serve. It is the operator's: filed as bounce mail, like the feedback-loop address, so a DSN or an
 * abuse report sent there is applied, and anything else stays in inbound_messages for the
 * operator to read (the intake logs it as not a report).
 */
const isPostmaster = (local: string) => local.toLowerCase() === 'postmaster';

export default function recipientDomains(deps: MxDeps): Plugin {
  const host = deps.config.hostname;
  const feedbackLoop = deps.config.inbound.recipient_domains.feedback_loop_local_part;
  const relayDenied = (why = 'relay access denied') => reject(550, '5.7.1', why);
  const noSuchUser = () => reject(550, '5.1.1', 'no such recipient here');
  // The RCPTs of concurrent sessions (each session's socket is its own callback) share one query per batch, by the
  // house's group commit; nothing is cached.
  const facts = new GroupCommit<string, RecipientFacts>(
    (addresses) =>
      recipientFacts(
        deps.sql,
        addresses.map((address) => ({ address, domain: address.slice(address.lastIndexOf('@') + 1) })),
      ),
    deps.log,
    'recipient look-ups',
    200,
    READS_IN_FLIGHT,
  );
  return {
    name: 'recipient-domains',
    hooks: {
      rcpt: async ({ recipient, session }) => {
        if (recipient.sourceRoute !== undefined) return relayDenied('relay access denied: source routes are not accepted');
        const at = recipient.address.lastIndexOf('@');
        // The domainless <postmaster> (RFC 5321 §4.1.1.3), the only address without a domain the server lets through.
        if (at < 0 && isPostmaster(recipient.address)) {
          recipient.route = { kind: 'bounce', sendId: null };
          return accept();
        }
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
          if (local.toLowerCase() === feedbackLoop || isPostmaster(local)) {
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

        const known = await facts.write(`${local.toLowerCase()}@${domain}`);
        if (known.mailboxId !== null && known.mailboxTenantId !== null) {
          // A workspace mailbox receives even before its domain's MX is verified; the webhook only once it is.
          const webhook = known.mxVerified && known.webhookEnabled && known.domainTenantId === known.mailboxTenantId;
          recipient.route = { kind: 'tenant', tenantId: known.mailboxTenantId, mailboxId: known.mailboxId, webhook };
          return accept();
        }
        if (known.domainTenantId !== null && known.mxVerified) {
          // A domain we serve whose tenant takes no mail for its postmaster: the operator's postmaster takes it.
          if (!known.webhookEnabled && isPostmaster(local)) {
            recipient.route = { kind: 'bounce', sendId: null };
            return accept();
          }
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
