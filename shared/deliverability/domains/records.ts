// The DNS records a tenant publishes for a sending domain: SPF, DKIM, DMARC (needed to send) and MX (needed to receive).
export type RecordKind = 'spf' | 'dkim' | 'dmarc' | 'mx';
/** The records that must all verify before a domain may send. */
export const SENDING_KINDS: readonly RecordKind[] = ['spf', 'dkim', 'dmarc'];

export interface ExpectedRecord {
  kind: RecordKind;
  type: 'TXT' | 'MX';
  /** Fully qualified owner name, no trailing dot. */
  host: string;
  /** TXT: the whole text (publish it as is; long values are split into strings by the zone line). MX: the exchange host. */
  value: string;
  priority: number | null;
}

export interface DkimPublicKey {
  selector: string;
  /** Base64 SubjectPublicKeyInfo: the p= tag. */
  publicKey: string;
}

export const MX_PRIORITY = 10;
/** A DNS TXT character-string holds at most 255 bytes; longer texts are published as several strings. */
export const TXT_STRING_MAX = 255;

export const dkimHost = (selector: string, domain: string) => `${selector}._domainkey.${domain}`;
export const dkimTxtValue = (publicKey: string) => `v=DKIM1; k=rsa; p=${publicKey}`;
export const dmarcHost = (domain: string) => `_dmarc.${domain}`;
export const spfValue = (include: string) => `v=spf1 include:${include} ~all`;
/** A starting policy: reports without rejection, which satisfies mailbox providers' sender rules; tighten later. */
export const DMARC_VALUE = 'v=DMARC1; p=none; adkim=r; aspf=r';

export function dkimRecord(domain: string, key: DkimPublicKey): ExpectedRecord {
  return { kind: 'dkim', type: 'TXT', host: dkimHost(key.selector, domain), value: dkimTxtValue(key.publicKey), priority: null };
}

export function expectedRecords(domain: string, key: DkimPublicKey, service: { spfInclude: string; mailHost: string }): ExpectedRecord[] {
  return [
    { kind: 'spf', type: 'TXT', host: domain, value: spfValue(service.spfInclude), priority: null },
    dkimRecord(domain, key),
    { kind: 'dmarc', type: 'TXT', host: dmarcHost(domain), value: DMARC_VALUE, priority: null },
    { kind: 'mx', type: 'MX', host: domain, value: service.mailHost, priority: MX_PRIORITY },
  ];
}

/** Splits a TXT text into character-strings of at most 255 bytes (ASCII: DKIM/SPF/DMARC texts are). */
export function txtStrings(value: string): string[] {
  const strings: string[] = [];
  for (let i = 0; i < value.length; i += TXT_STRING_MAX) strings.push(value.slice(i, i + TXT_STRING_MAX));
  return strings.length > 0 ? strings : [''];
}

/** The record as one BIND zone-file line, long TXT texts already split into quoted strings. */
export function zoneLine(record: ExpectedRecord): string {
  const data =
    record.type === 'MX'
      ? `${record.priority ?? MX_PRIORITY} ${record.value}.`
      : txtStrings(record.value)
          .map((s) => `"${s.replace(/["\\]/g, '\\$&')}"`)
          .join(' ');
  return `${record.host}. 3600 IN ${record.type} ${data}`;
}
