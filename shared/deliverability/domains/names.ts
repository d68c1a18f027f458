// Validation and normalization of sending-domain names (IDNA to the ASCII form DNS uses; no IPs, no single labels).
import { isIP } from 'node:net';
import { domainToASCII, domainToUnicode } from 'node:url';
import { validationError } from '../../kernel/errors.js';

export interface DomainName {
  /** A-label (punycode) form, lower case, no trailing dot: what DNS and the database use. */
  ascii: string;
  /** U-label form for display (same as ascii for plain ASCII names). */
  unicode: string;
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Parses a domain name a tenant wants to send from, or throws 422 naming `field`.
 * `reserved` are host names of the service itself that no tenant may claim (nor their subdomains).
 */
export function parseDomainName(input: string, reserved: readonly string[] = [], field = 'name'): DomainName {
  const given = input.trim();
  const trimmed = given.replace(/\.$/, '');
  if (trimmed === '') throw validationError(field, 'must be a domain name');
  if (isIP(trimmed) !== 0 || isIP(trimmed.replace(/^\[|\]$/g, '')) !== 0) {
    throw validationError(field, 'must be a domain name, not an IP address');
  }
  if (/[\s/\\:@*?#%[\]]/.test(trimmed)) throw validationError(field, 'must be a bare domain name (no scheme, port, path, wildcard, percent-escape or address)');
  // UTS-46 mapping (WHATWG host parsing): case folding and NFKC-style compatibility mapping, so that
  // full-width letters and dots (ｅｘａｍｐｌｅ．com), ideographic full stops and ignorable characters
  // (soft hyphen, zero-width space) give the same A-label name as the plain spelling: one name, one claim.
  // A full-width trailing dot only becomes '.' here: one trailing dot is dropped, whichever its width.
  const mapped = domainToASCII(trimmed.toLowerCase());
  const ascii = trimmed === given ? mapped.replace(/\.$/, '') : mapped;
  if (ascii === '') throw validationError(field, 'is not a valid internationalized domain name');
  if (isIP(ascii) !== 0) throw validationError(field, 'must be a domain name, not an IP address');
  if (ascii.length > 253) throw validationError(field, 'is longer than 253 characters');
  const labels = ascii.split('.');
  if (labels.length < 2) throw validationError(field, 'must have at least two labels (e.g. example.com)');
  for (const label of labels) {
    if (!LABEL.test(label)) throw validationError(field, `has an invalid label "${label}" (letters, digits and inner hyphens, 1-63 characters)`);
  }
  const tld = labels[labels.length - 1]!;
  if (/^\d+$/.test(tld)) throw validationError(field, 'must not end in a numeric label');
  for (const host of reserved) {
    if (ascii === host || ascii.endsWith(`.${host}`)) throw validationError(field, `${host} belongs to the service and cannot be claimed`);
  }
  return { ascii, unicode: domainToUnicode(ascii) || ascii };
}
