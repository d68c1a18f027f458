// What Mailpath asks to be published at one DNS name: the SPF, DMARC and MX records of tenants' domains and the DKIM record of every key still in use, read
// back for a DNS server that serves them (mailpath dev).
import type { Queryable } from '../../db/connection.js';
import { dkimRecord } from './records.js';

export interface PublishedRecords {
  /** TXT texts, each whole (split into 255-byte strings on the wire). */
  txt: string[];
  mx: { exchange: string; priority: number }[];
}

const DKIM_NAME = /^([^.]+)\._domainkey\.(.+)$/;

/**
 * The records at `name` (lower-case A-label, no trailing dot) as the domains' record lists show
 * them, except DKIM, which comes from the keys: the signing key, a rotation's new key while it
 * propagates, and a replaced key during its grace period all stay published (a retired one does not).
 */
export async function publishedAt(db: Queryable, name: string): Promise<PublishedRecords> {
  const rows = await db<{ type: 'TXT' | 'MX'; expected: string; priority: number | null }[]>`
    select type, expected, priority from domain_records where host = ${name} and kind <> 'dkim' order by kind`;
  const published: PublishedRecords = {
    txt: rows.filter((r) => r.type === 'TXT').map((r) => r.expected),
    mx: rows.filter((r) => r.type === 'MX').map((r) => ({ exchange: r.expected, priority: r.priority ?? 10 })),
  };
  const dkim = DKIM_NAME.exec(name);
  if (dkim) {
    const [, selector, domain] = dkim as unknown as [string, string, string];
    const keys = await db<{ public_key: string }[]>`
      select k.public_key from dkim_keys k join domains d on d.id = k.domain_id
      where d.name = ${domain} and k.selector = ${selector} and k.state in ('pending', 'active', 'retiring')`;
    for (const key of keys) published.txt.push(dkimRecord(domain, { selector, publicKey: key.public_key }).value);
  }
  return published;
}
