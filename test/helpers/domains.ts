// Publishes a domain's records (as the API lists them) into loopback DNS servers, the way a tenant would at its DNS host.
import { txtStrings } from '../../shared/deliverability/domains/records.js';
import type { TestDnsServer } from './dns-server.js';

export interface ApiRecord {
  kind: 'spf' | 'dkim' | 'dmarc' | 'mx';
  type: 'TXT' | 'MX';
  host: string;
  value: string;
  priority: number | null;
  /** The API's other fields (verified, found, error...). */
  [field: string]: unknown;
}

/**
 * Publishes the given kinds (default: all). TXT values longer than 255 bytes are published as
 * several character-strings, as a zone file or DNS host must.
 */
export function publishRecords(dns: TestDnsServer, records: ApiRecord[], kinds: ApiRecord['kind'][] = ['spf', 'dkim', 'dmarc', 'mx']): void {
  for (const r of records) {
    if (!kinds.includes(r.kind)) continue;
    if (r.type === 'MX') dns.setMx(r.host, [{ exchange: r.value, priority: r.priority ?? 10 }]);
    else dns.setTxt(r.host, [r.value.length > 255 ? splitTxt(r.value) : r.value]);
  }
}

/** A TXT text as the 255-byte character-strings a zone file publishes (the product's own splitter). */
export const splitTxt = txtStrings;

export const recordOf = (records: ApiRecord[], kind: ApiRecord['kind']): ApiRecord => {
  const found = records.find((r) => r.kind === kind);
  if (!found) throw new Error(`no ${kind} record`);
  return found;
};
