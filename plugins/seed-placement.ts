// MX plugin `seed-placement`, in the queue phase before `store`: a message to an active seed mailbox that is one of a campaign's seed copies has its placement (inbox or spam) recorded; it never decides anything.
import { observeAtMx } from '../shared/seedlist/placement.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import { proceed, type Plugin } from '../mta/hooks/phases.js';

export default function seedPlacement(deps: MxDeps): Plugin {
  return {
    name: 'seed-placement',
    hooks: {
      queue: async ({ session, transaction, message }) => {
        // Only addresses of a tenant (a workspace mailbox or a domain's webhook) can be seeds hosted here.
        const recipients = transaction.recipients.filter((r) => r.route?.kind === 'tenant').map((r) => r.address.toLowerCase());
        if (recipients.length === 0) return proceed();
        // Our own fields (Authentication-Results) first, as stored: the first of a name is ours, not a forgery below.
        const head = Buffer.concat([Buffer.from(transaction.headers.join(''), 'utf8'), message.bytes]);
        try {
          const observed = await observeAtMx(deps.sql, recipients, head, deps.clock.now());
          if (observed && observed.hitIds.length > 0) session.log.info({ message: transaction.id, placement: observed.placement, hits: observed.hitIds }, 'seed copy placement recorded');
        } catch (err) {
          // Placement is a report about the mail, not a reason to refuse it: the message is still stored.
          session.log.error({ err, message: transaction.id }, 'recording a seed copy placement failed');
        }
        return proceed();
      },
    },
  };
}
