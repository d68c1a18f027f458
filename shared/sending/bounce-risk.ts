// The optional pre-send recipient check (bounce_risk_check_enabled): a domain that accepts mail, and not a suppressed address.
import { DnsLookupError, type DnsResolver } from '../kernel/dns.js';
import { validationError } from '../kernel/errors.js';
import type { Queryable } from '../db/connection.js';
import { isSuppressed } from '../audiences/suppressions/service.js';

/**
 * Throws 422 naming `to` with the reason the message would bounce: the domain publishes a null MX
 * (RFC 7505) or has neither MX nor address records, or the address is suppressed (or an unsubscribed contact). A DNS failure
 * (timeout, SERVFAIL) says nothing about the recipient, so it does not block the send.
 */
export async function checkBounceRisk(db: Queryable, dns: DnsResolver, tenantId: string, to: string): Promise<void> {
  if (await isSuppressed(db, tenantId, to)) throw validationError('to', 'is on the suppression list or an unsubscribed contact: mail to it would be dropped');
  const domain = to.slice(to.lastIndexOf('@') + 1);
  try {
    const mx = await dns.mx(domain);
    if (mx.length > 0) {
      if (mx.every((r) => r.exchange === '')) throw validationError('to', `the domain ${domain} accepts no mail (null MX)`);
      return;
    }
    if ((await dns.addresses(domain)).length === 0) throw validationError('to', `the domain ${domain} has no MX or A/AAAA record: mail to it would bounce`);
  } catch (err) {
    if (err instanceof DnsLookupError) return;
    throw err;
  }
}
