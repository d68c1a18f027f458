// Which mailbox provider a recipient domain belongs to: the consumer domains by name, custom domains by their MX hosts (looked up through the injectable
// resolver, cached).
import type { Clock } from '../../kernel/clock.js';
import type { DnsResolver } from '../../kernel/dns.js';
import { providerOfDomain, providerOfMxHost, type MailboxProvider } from '../../deliverability/mailbox-providers.js';
import { TtlCache } from './ttl-cache.js';

/** How long a custom domain's provider is trusted: MX records rarely move, and a stale answer only skews a score. */
export const PROVIDER_TTL_MS = 6 * 3_600_000;
/** A failed look-up is retried sooner: the domain counts as `other` meanwhile. */
const FAILED_TTL_MS = 5 * 60_000;
/** Look-ups in flight at once for one classification (a tenant may mail thousands of company domains). */
const PARALLEL = 16;

export class ProviderClassifier {
  private readonly known: TtlCache<MailboxProvider>;
  private readonly failed: TtlCache<true>;

  constructor(
    private readonly dns: DnsResolver,
    clock: Clock,
  ) {
    this.known = new TtlCache(clock, PROVIDER_TTL_MS, 100_000);
    this.failed = new TtlCache(clock, FAILED_TTL_MS, 100_000);
  }

  /** The provider of each domain given (lower-case names). The MX host with the best (lowest) priority decides. */
  async classify(domains: readonly string[]): Promise<Map<string, MailboxProvider>> {
    const out = new Map<string, MailboxProvider>();
    const lookups: string[] = [];
    for (const domain of new Set(domains)) {
      const byName = providerOfDomain(domain);
      const cached = byName === 'other' ? this.known.get(domain) : byName;
      if (cached !== undefined) out.set(domain, cached);
      else if (this.failed.get(domain) !== undefined) out.set(domain, 'other');
      else lookups.push(domain);
    }
    for (let i = 0; i < lookups.length; i += PARALLEL) {
      await Promise.all(lookups.slice(i, i + PARALLEL).map(async (domain) => out.set(domain, await this.lookUp(domain))));
    }
    return out;
  }

  private async lookUp(domain: string): Promise<MailboxProvider> {
    try {
      const mx = (await this.dns.mx(domain)).filter((r) => r.exchange !== '').sort((a, b) => a.priority - b.priority);
      const provider = mx.length === 0 ? 'other' : providerOfMxHost(mx[0]!.exchange);
      this.known.set(domain, provider);
      return provider;
    } catch {
      // Unknown for now (timeout, SERVFAIL): not cached as an answer, asked again after FAILED_TTL_MS.
      this.failed.set(domain, true);
      return 'other';
    }
  }
}
