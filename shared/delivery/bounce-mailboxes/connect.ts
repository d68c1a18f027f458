// Opens a POP3 session to a tenant's bounce mailbox: the host resolved and checked against the address policy, the password unsealed, then connect and log in.
import type { Config } from '../../config/index.js';
import type { DnsResolver } from '../../kernel/dns.js';
import { resolveAllowedHost, UrlPolicyError } from '../../webhooks/inbound/url-policy.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { Pop3Error, Pop3Session } from './pop3.js';
import type { BounceMailboxRow } from './queries.js';

export interface ConnectDeps {
  dns: DnsResolver;
  vault: SealedBox;
  config: Pick<Config, 'bounceMailboxes'>;
}

/** The context a mailbox's password is sealed under: a sealed value copied into another row does not open. */
export const passwordContext = (mailboxId: string) => `bounce-mailbox:${mailboxId}`;

/** Logged in, or a Pop3Error saying why not (a refused host is one too: the tenant can fix it). */
export async function openSession(
  deps: ConnectDeps,
  mailbox: Pick<BounceMailboxRow, 'id' | 'host' | 'port' | 'username' | 'password_sealed' | 'use_tls_implicit'>,
): Promise<Pop3Session> {
  const policy = deps.config.bounceMailboxes;
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
}
