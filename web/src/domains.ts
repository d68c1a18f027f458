// Sending domains as the dashboard uses them: their types from the generated client, the API calls (a DKIM key
// rotation among them), the zone file a user hands to a DNS host, and the bounded live check of a domain's records.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { paths } from '../../clients/typescript/index';
import { ApiError, api, unwrap, unwrapList } from './api';

export type Domain = paths['/domains/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type DnsRecord = Domain['records'][number];
export type DkimRotation = NonNullable<Domain['dkim']['rotation']>;

export const listDomains = (limit = 50, after?: string) => unwrapList(api.GET('/domains', { params: { query: { limit, ...(after ? { after } : {}) } } }));
export const getDomain = (id: string) => unwrap(api.GET('/domains/{id}', { params: { path: { id } } }));
export const verifyDomain = (id: string) => unwrap(api.POST('/domains/{id}/verify', { params: { path: { id } } }));
export const addDomain = (name: string) => unwrap(api.POST('/domains', { body: { name: name.trim() } }));
export const rotateDkim = (id: string, reason: string) =>
  unwrap(api.POST('/domains/{id}/dkim/rotate', { params: { path: { id } }, body: reason.trim() ? { reason: reason.trim() } : {} }));

/** What a record is for, in a sender's words. */
export const RECORD_PURPOSE: Record<DnsRecord['kind'], string> = {
  spf: 'SPF: lets Mailpath send for the domain',
  dkim: 'DKIM: the public key receivers check signatures with',
  dmarc: 'DMARC: tells receivers what to do with unauthenticated mail',
  mx: 'MX: where inbound mail for the domain goes (optional for sending)',
};

/**
 * The records as a BIND zone file: the API's own zone lines (long TXT texts already split into 255-byte strings),
 * each under a comment saying what it is for, so a DNS host's import takes them and a person can read them.
 */
export function zoneFile(domain: Domain, now = new Date()): string {
  const lines = [`; DNS records Mailpath asks you to publish for ${domain.name}`, `; made ${now.toISOString()}; import into your DNS host or add by hand`, ''];
  for (const record of domain.records) lines.push(`; ${RECORD_PURPOSE[record.kind]}`, record.zone_line, '');
  return lines.join('\n');
}

/** Hands the zone file to the browser as a download (a blob URL: nothing inline, so the CSP allows it). */
export function downloadZoneFile(domain: Domain): void {
  const url = URL.createObjectURL(new Blob([zoneFile(domain)], { type: 'text/dns' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${domain.name}.zone`;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has started from the URL; freeing it at once can cancel it in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Seconds between automatic checks: soon at first (a record just published), then backing off; then it stops. */
const CHECK_DELAYS_S = [3, 5, 10, 15, 30, 30, 60, 60];

export type Watch = 'checking' | 'waiting' | 'stopped' | 'done';

/**
 * Re-checks an unverified domain's DNS (POST /domains/{id}/verify) on a bounded schedule while the page is open,
 * so a user who has just published the records watches them turn verified; stops when verified, superseded, or
 * after the last delay (a "Check now" restarts it). A 429 waits the Retry-After the API asked for.
 */
export function useVerificationWatch(domain: Domain | undefined, update: (d: Domain) => void) {
  const [watch, setWatch] = useState<Watch>('stopped');
  const [error, setError] = useState<unknown>(undefined);
  const [round, setRound] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const id = domain?.id;
  const settled = domain?.status === 'verified' || domain?.status === 'superseded';
  useEffect(() => {
    if (!id || settled) {
      setWatch(settled ? 'done' : 'stopped');
      return;
    }
    let alive = true;
    let attempt = 0;
    const check = async () => {
      setWatch('checking');
      let wait = CHECK_DELAYS_S[attempt];
      try {
        const fresh = await verifyDomain(id);
        if (!alive) return;
        setError(undefined);
        update(fresh);
        if (fresh.status === 'verified' || fresh.status === 'superseded') {
          setWatch('done');
          return;
        }
      } catch (err) {
        if (!alive) return;
        setError(err);
        // Only a rate limit is worth waiting out; any other refusal would refuse again.
        if (!(err instanceof ApiError && err.status === 429)) {
          setWatch('stopped');
          return;
        }
        if (wait !== undefined && err.retryAfter) wait = Math.max(wait, err.retryAfter);
      }
      if (wait === undefined) {
        setWatch('stopped');
        return;
      }
      attempt += 1;
      setWatch('waiting');
      timer.current = setTimeout(check, wait * 1000);
    };
    void check();
    return () => {
      alive = false;
      clearTimeout(timer.current);
    };
  }, [id, settled, round]);
  /** A settled domain is checked once (has a record drifted?); an unsettled one restarts the schedule. */
  const checkNow = async () => {
    if (!id) return;
    if (!settled) return setRound((r) => r + 1);
    setWatch('checking');
    try {
      update(await verifyDomain(id));
      setError(undefined);
    } catch (err) {
      setError(err);
    }
    setWatch('done');
  };
  return { watch, error, checkNow };
}
