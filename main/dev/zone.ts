// The dev DNS zone: *.localhost names only (RFC 6761: they never exist on the public DNS, so no real domain is ever faked), each answering loopback
// addresses and exactly the records Mailpath asks tenants to publish there.
import type { Config } from '../../shared/config/index.js';
import type { Queryable } from '../../shared/db/connection.js';
import { publishedAt } from '../../shared/deliverability/domains/published.js';
import { txtStrings } from '../../shared/deliverability/domains/records.js';
import type { Zone, ZoneAnswer } from './dns.js';

const LOOPBACK = ['127.0.0.1', '::1'];

export const isDevName = (name: string): boolean => name === 'localhost' || name.endsWith('.localhost');

/**
 * The zone of `mailpath dev`. `db()` is the process's database (undefined until it is open: a
 * question before that is SERVFAIL, which verification records as a failed look-up, proving nothing).
 * The SPF include host gets the one record an operator publishes there, listing the addresses
 * Mailpath sends from; in dev mode that is this machine.
 */
export function devZone(config: Pick<Config, 'spfInclude'>, db: () => Queryable | undefined): Zone {
  return async (name): Promise<ZoneAnswer> => {
    if (!isDevName(name)) return { exists: false, txt: [], mx: [], addresses: [] };
    const sql = db();
    if (!sql) throw new Error('the database is not open yet');
    const published = await publishedAt(sql, name);
    const txt = published.txt;
    if (name === config.spfInclude) txt.push('v=spf1 ip4:127.0.0.1 ip6:::1 -all');
    return { exists: true, txt: txt.map(txtStrings), mx: published.mx, addresses: LOOPBACK };
  };
}
