// Checks one published record against what it should be, through a DNS resolver. Pure apart from the look-ups.
import { DnsLookupError, type DnsResolver } from '../../kernel/dns.js';
import { dmarcHost, MX_PRIORITY } from './records.js';

export interface CheckResult {
  verified: boolean;
  /** What DNS holds that bears on the check (joined TXT text, "10 mx.host"), or null when nothing. */
  found: string | null;
  /** Why it did not verify, or null. */
  error: string | null;
  /** The look-up itself failed (timeout, SERVFAIL...): absence was not shown, so a verified record must not flip. */
  lookupFailed: boolean;
}

const ok = (found: string): CheckResult => ({ verified: true, found, error: null, lookupFailed: false });
const fail = (error: string, found: string | null = null): CheckResult => ({ verified: false, found, error, lookupFailed: false });

/** Runs a check, turning a failed look-up into an unverified result that says so. */
async function guarded(check: () => Promise<CheckResult>): Promise<CheckResult> {
  try {
    return await check();
  } catch (err) {
    if (err instanceof DnsLookupError) {
      return { verified: false, found: null, error: `DNS look-up failed: ${err.message}`, lookupFailed: true };
    }
    throw err;
  }
}

const bareHost = (host: string) => host.trim().toLowerCase().replace(/\.$/, '');

/** Tags of a DKIM or DMARC record ("k=v; k=v"); whitespace inside values is folding and is dropped. */
export function parseTags(text: string): Map<string, string> {
  const tags = new Map<string, string>();
  for (const part of text.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim().toLowerCase();
    if (name !== '' && !tags.has(name)) tags.set(name, part.slice(eq + 1).replace(/\s+/g, ''));
  }
  return tags;
}

/** SPF: exactly one v=spf1 record at the domain, authorizing the include host with a pass qualifier. */
export function checkSpf(dns: DnsResolver, domain: string, include: string): Promise<CheckResult> {
  return guarded(async () => {
    const spf = (await dns.txt(domain)).filter((t) => /^v=spf1(\s|$)/i.test(t.trim()));
    if (spf.length === 0) return fail(`no SPF record (v=spf1) at ${domain}`);
    if (spf.length > 1)
      return fail(`${spf.length} SPF records at ${domain}: receivers treat that as an error (RFC 7208 permerror); merge them into one`, spf.join(' | '));
    const record = spf[0]!;
    const includes = record
      .trim()
      .split(/\s+/)
      .map((term) => /^\+?include:(.+)$/i.exec(term)?.[1])
      .filter((host): host is string => host !== undefined)
      .map(bareHost);
    return includes.includes(include) ? ok(record) : fail(`the SPF record does not include:${include}`, record);
  });
}

/** DKIM: a TXT at the selector host whose p= is our public key (strings of a split record arrive joined). */
export function checkDkim(dns: DnsResolver, host: string, publicKey: string): Promise<CheckResult> {
  return guarded(async () => {
    const records = await dns.txt(host);
    if (records.length === 0) return fail(`no DKIM record at ${host}`);
    for (const record of records) {
      const tags = parseTags(record);
      const version = tags.get('v');
      const keyType = tags.get('k');
      if (version !== undefined && version !== 'DKIM1') continue;
      if (keyType !== undefined && keyType.toLowerCase() !== 'rsa') continue;
      if (tags.get('p') === publicKey) return ok(record);
    }
    return fail(`the DKIM record at ${host} does not hold this domain's public key`, records[0]!);
  });
}

/**
 * DMARC: one v=DMARC1 record with a valid p=. A subdomain without its own record is covered
 * by a parent's (its sp= policy, else p=), found by walking up the tree as DMARCbis does.
 */
export function checkDmarc(dns: DnsResolver, domain: string): Promise<CheckResult> {
  return guarded(async () => {
    const labels = domain.split('.');
    for (let i = 0; i <= labels.length - 2; i++) {
      const at = labels.slice(i).join('.');
      const host = dmarcHost(at);
      const dmarc = (await dns.txt(host)).filter((t) => /^v\s*=\s*DMARC1\s*(;|$)/i.test(t.trim()));
      if (dmarc.length === 0) continue;
      if (dmarc.length > 1) return fail(`${dmarc.length} DMARC records at ${host}: receivers ignore them all; keep one`, dmarc.join(' | '));
      const record = dmarc[0]!;
      const tags = parseTags(record);
      const policy = (i > 0 ? (tags.get('sp') ?? tags.get('p')) : tags.get('p'))?.toLowerCase();
      if (policy === undefined || !['none', 'quarantine', 'reject'].includes(policy)) {
        return fail(`the DMARC record at ${host} has no valid p= (none, quarantine or reject)`, record);
      }
      return ok(record);
    }
    return fail(`no DMARC record (v=DMARC1) at ${dmarcHost(domain)}`);
  });
}

/** MX: priority 10 to the service's mail host (needed to receive mail, not to send). */
export function checkMx(dns: DnsResolver, domain: string, mailHost: string): Promise<CheckResult> {
  return guarded(async () => {
    const records = await dns.mx(domain);
    if (records.length === 0) return fail(`no MX record at ${domain}`);
    const found = records
      .slice()
      .sort((a, b) => a.priority - b.priority)
      .map((r) => `${r.priority} ${r.exchange}`)
      .join(', ');
    const ours = records.filter((r) => bareHost(r.exchange) === mailHost);
    if (ours.some((r) => r.priority === MX_PRIORITY)) return ok(found);
    if (ours.length > 0) return fail(`the MX record for ${mailHost} has priority ${ours[0]!.priority}, expected ${MX_PRIORITY}`, found);
    return fail(`no MX record points at ${mailHost}`, found);
  });
}
