// The webhook URL policy: https only, no credentials, and a host that resolves only to public addresses; checked at set-up and again before each POST.
import { isIP } from 'node:net';
import type { WebhooksConfig } from '../../config/index.js';
import { DnsLookupError, type DnsResolver } from '../../kernel/dns.js';
import { forbiddenAddressReason } from './address-policy.js';

export const MAX_URL_LENGTH = 2048;

export type UrlPolicy = Pick<WebhooksConfig, 'allow_http' | 'allow_private_addresses'>;

/** A URL the policy refuses; the message says why, for a 422 naming webhook_url or a delivery's last_error. */
export class UrlPolicyError extends Error {
  override name = 'UrlPolicyError';
}

/** A checked URL and the one address the request must connect to (the address that was checked). */
export interface PinnedTarget {
  url: URL;
  /** The host as DNS knows it: the URL's host name without IPv6 brackets. */
  host: string;
  address: string;
  family: 4 | 6;
}

/** The URL's syntax and scheme, before any look-up. */
export function parseWebhookUrl(text: string, policy: UrlPolicy): URL {
  if (text.length > MAX_URL_LENGTH) throw new UrlPolicyError(`is longer than ${MAX_URL_LENGTH} characters`);
  if (/[\s\p{Cc}]/u.test(text)) throw new UrlPolicyError('must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UrlPolicyError('must be an absolute URL such as https://hooks.example.com/inbound');
  }
  if (url.protocol !== 'https:' && !(policy.allow_http && url.protocol === 'http:')) {
    throw new UrlPolicyError(policy.allow_http ? 'must be an http:// or https:// URL' : 'must be an https:// URL');
  }
  // Credentials in the URL would be echoed back by every settings read and kept in logs.
  if (url.username !== '' || url.password !== '') throw new UrlPolicyError('must not contain a user name or password');
  if (url.hostname === '') throw new UrlPolicyError('must name a host');
  return url;
}

const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

const withArticle = (words: string) => `${/^[aeiou]/i.test(words) ? 'an' : 'a'} ${words}`;

/**
 * Throws UrlPolicyError when the address may not be reached under this policy. A name's message says
 * the class of address it resolves to, never the address: the refusal must not tell a tenant what an
 * internal name resolves to (a DNS oracle). An address literal is the tenant's own input, named back.
 */
function checkAddress(address: string, host: string, allowPrivate: boolean, reacher: string): void {
  if (allowPrivate) return;
  const reason = forbiddenAddressReason(address);
  if (reason === undefined) return;
  const named = host === address ? `is the ${reason} address ${address}` : `host ${host} resolves to ${withArticle(reason)} address`;
  throw new UrlPolicyError(`${named}, which ${reacher} may not reach`);
}

/**
 * Resolves `host` (a name or an address literal) through `dns` and checks every address it has: one
 * forbidden address refuses it (a host answering both public and internal addresses is refused, not
 * raced). Returns the address to connect to, so the connection never resolves the name again.
 * `reacher` names who connects, for the message ("webhooks", "bounce mailboxes").
 */
export async function resolveAllowedHost(host: string, allowPrivate: boolean, dns: DnsResolver, reacher: string): Promise<{ address: string; family: 4 | 6 }> {
  const literal = isIP(host);
  if (literal !== 0) {
    checkAddress(host, host, allowPrivate, reacher);
    return { address: host, family: literal as 4 | 6 };
  }
  let addresses: string[];
  try {
    addresses = await dns.addresses(host);
  } catch (err) {
    if (err instanceof DnsLookupError) throw new UrlPolicyError(`host ${host} could not be resolved (${err.code}); try again`);
    throw err;
  }
  if (addresses.length === 0) throw new UrlPolicyError(`host ${host} does not resolve to any address`);
  for (const address of addresses) checkAddress(address, host, allowPrivate, reacher);
  // IPv4 first: a host published with both is far more often reachable over v4.
  const address = addresses.find((a) => isIP(a) === 4) ?? addresses[0]!;
  return { address, family: isIP(address) as 4 | 6 };
}

/** The URL's host resolved and checked (see resolveAllowedHost). */
export async function resolveWebhookTarget(url: URL, policy: UrlPolicy, dns: DnsResolver): Promise<PinnedTarget> {
  const host = hostOf(url);
  return { url, host, ...(await resolveAllowedHost(host, policy.allow_private_addresses, dns, 'webhooks')) };
}

/** Both steps: what the settings route and each delivery run. */
export async function checkWebhookUrl(text: string, policy: UrlPolicy, dns: DnsResolver): Promise<PinnedTarget> {
  return resolveWebhookTarget(parseWebhookUrl(text, policy), policy, dns);
}
