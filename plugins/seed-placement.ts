// MX plugin `seed-placement`, in the queue phase before `store`: a message to an active seed mailbox that is one of a campaign's seed copies has its
// placement (inbox or spam) recorded; it never decides anything.
import { performance } from 'node:perf_hooks';
import { activeSeedEmails } from '../shared/deliverability/seed-mailboxes/queries.js';
import { observeAtMx } from '../shared/deliverability/seed-mailboxes/placement.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import { proceed, type Plugin } from '../mta/hooks/phases.js';

export default function seedPlacement(deps: MxDeps): Plugin {
  const ttl = deps.config.seedlist.mx_cache_ms;
  let cached: { at: number; emails: Set<string> } | undefined;
  let loading: Promise<Set<string>> | undefined;
  /** The active seed addresses, reread at most every mx_cache_ms: mail to no seed (nearly all) costs no query. */
  const seedEmails = (): Promise<Set<string>> => {
    if (cached && performance.now() - cached.at < ttl) return Promise.resolve(cached.emails);
    loading ??= activeSeedEmails(deps.sql)
      .then((emails) => {
        cached = { at: performance.now(), emails: new Set(emails) };
        return cached.emails;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return {
    name: 'seed-placement',
    hooks: {
      queue: async ({ session, transaction, message }) => {
        try {
          // Only addresses of a tenant (a workspace mailbox or a domain's webhook) can be seeds hosted here.
          const tenantRecipients = transaction.recipients.filter((r) => r.route?.kind === 'tenant').map((r) => r.address.toLowerCase());
          if (tenantRecipients.length === 0) return proceed();
          const seeds = await seedEmails();
          const recipients = tenantRecipients.filter((a) => seeds.has(a));
          if (recipients.length === 0) return proceed();
          // Our own fields (Authentication-Results) first, as stored: the first of a name is ours, not a forgery below.
          const head = Buffer.concat([Buffer.from(transaction.headers.join(''), 'utf8'), message.bytes]);
          const observed = await observeAtMx(deps.sql, recipients, head, deps.clock.now());
          if (observed && observed.hitIds.length > 0)
            session.log.info({ message: transaction.id, placement: observed.placement, hits: observed.hitIds }, 'seed copy placement recorded');
        } catch (err) {
          // Placement is a report about the mail, not a reason to refuse it: the message is still stored.
          session.log.error({ err, message: transaction.id }, 'recording a seed copy placement failed');
        }
        return proceed();
      },
    },
  };
}
