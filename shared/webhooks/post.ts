// The signed webhook POST as the domain sees it: what goes in, what comes back, and the function type the composition root fills (jobs/webhook-post.ts).
import type { WebhooksConfig } from '../config/index.js';
import type { DnsResolver } from '../kernel/dns.js';

export interface PostDeps {
  /** MAILPATH_DNS_SERVERS: the host is resolved here, once per POST, and the request goes to that address. */
  dns: DnsResolver;
  webhooks: WebhooksConfig;
}

/** What to send: the caller signs and names its headers; this module only carries them. */
export interface SignedRequest {
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

export type PostResult =
  | { kind: 'answered'; status: number; retryAfter: string | undefined; snippet: string; durationMs: number }
  /** The URL policy refused the address the host resolves to now (or the look-up failed): nothing was sent. */
  | { kind: 'refused'; error: string; durationMs: number }
  | { kind: 'failed'; error: string; timedOut: boolean; durationMs: number };

/** POSTs one signed request to a tenant's URL under the webhook URL policy, once; every outcome is a result, never a throw. */
export type PostSigned = (deps: PostDeps, post: SignedRequest) => Promise<PostResult>;
