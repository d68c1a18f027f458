// The live DKIM key of each sending domain, opened once and kept for a few seconds so signing costs no query per message.
import type { Queryable } from '../db/connection.js';
import type { KeyObject } from 'node:crypto';
import { loadSigningKey } from '../deliverability/domains/dkim-keys.js';
import type { SealedBox } from '../kernel/secrets/sealed-box.js';
import { parseSigningKey } from './dkim.js';

/** A domain's live signer, its private key opened and parsed. */
export interface CachedSigningKey {
  selector: string;
  privateKey: KeyObject;
}

/**
 * A rotation's new key is picked up within `ttlMs`; meanwhile the old key keeps signing, which is
 * safe because a replaced key stays published (retiring) for days after activation.
 */
export class SigningKeyCache {
  private readonly entries = new Map<string, { key: CachedSigningKey | undefined; fetchedAt: number }>();
  /** Loads in flight: a campaign batch asks for the same key hundreds of times at once, and one load answers them all. */
  private readonly loading = new Map<string, Promise<CachedSigningKey | undefined>>();

  constructor(
    private readonly db: Queryable,
    private readonly vault: SealedBox,
    private readonly ttlMs = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  async get(domainId: string): Promise<CachedSigningKey | undefined> {
    const entry = this.entries.get(domainId);
    if (entry && this.now() - entry.fetchedAt < this.ttlMs) return entry.key;
    let load = this.loading.get(domainId);
    if (!load) {
      // Parsing the PEM costs more than a signature: once per expiry, not once per waiting send.
      load = this.load(domainId).finally(() => this.loading.delete(domainId));
      this.loading.set(domainId, load);
    }
    return load;
  }

  forget(domainId: string): void {
    this.entries.delete(domainId);
  }

  private async load(domainId: string): Promise<CachedSigningKey | undefined> {
    const opened = await loadSigningKey(this.db, this.vault, domainId);
    const key = opened && { selector: opened.selector, privateKey: parseSigningKey(opened.privateKeyPem) };
    if (this.entries.size >= 10_000) this.entries.clear();
    this.entries.set(domainId, { key, fetchedAt: this.now() });
    return key;
  }
}
