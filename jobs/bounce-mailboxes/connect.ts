// Opens a POP3 session to a tenant's bounce mailbox: the host resolved and checked against the address policy, the password unsealed, then connect and log
// in (the OpenMailbox port of shared/delivery/bounce-mailboxes/mailbox-session.ts).
import type { DnsResolver } from '../../shared/kernel/dns.js';
import { resolveAllowedHost, UrlPolicyError } from '../../shared/webhooks/inbound/url-policy.js';
import type { SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import { passwordContext, Pop3Error, type OpenMailbox } from '../../shared/delivery/bounce-mailboxes/mailbox-session.js';
import { Pop3Session } from './pop3.js';

export interface ConnectDeps {
  dns: DnsResolver;
  vault: SealedBox;
}

/** The real OpenMailbox: resolve and check the host, unseal the password, connect and log in. */
export function pop3Opener(deps: ConnectDeps): OpenMailbox {
  return async (mailbox, policy) => {
    let address: string;
    try {
      ({ address } = await resolveAllowedHost(mailbox.host, policy.allow_private_addresses, deps.dns, 'bounce mailboxes'));
    } catch (err) {
      if (err instanceof UrlPolicyError) throw new Pop3Error(`connect: ${err.message}`);
      throw err;
    }
    return Pop3Session.open({
      host: mailbox.host,
      address,
      port: mailbox.port,
      tls: mailbox.use_tls_implicit,
      username: mailbox.username,
      password: deps.vault.open(mailbox.password_sealed, passwordContext(mailbox.id)).toString('utf8'),
      timeoutMs: policy.timeout_ms,
    });
  };
}
