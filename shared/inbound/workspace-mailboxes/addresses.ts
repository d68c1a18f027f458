// Workspace mailbox addresses: the strict local@domain form a mailbox may take, lower-cased, domain in IDNA (ASCII) form.
import { parseDomainName } from '../../deliverability/domains/names.js';
import { validationError } from '../../kernel/errors.js';

/**
 * Letters, digits and inner dots, hyphens and underscores. Stricter than RFC 5321 on purpose: `%` and `!`
 * are old source-routing syntax, quoted local parts and comments are never needed for a new mailbox,
 * and `+` is left free for sub-addressing (user+tag@) should the MX ever map tags to a mailbox.
 */
const LOCAL_PART = /^[a-z0-9](?:[a-z0-9._-]{0,62}[a-z0-9])?$/;

export interface MailboxAddress {
  address: string;
  local: string;
  domain: string;
}

/** Parses the address of a new mailbox, or throws 422 naming `field`. */
export function parseMailboxAddress(input: string, field = 'address'): MailboxAddress {
  if (/[\r\n\u0085\u2028\u2029]/.test(input)) throw validationError(field, 'must not contain line breaks');
  const text = input.replace(/^[ \t]+|[ \t]+$/g, '');
  if (text === '') throw validationError(field, 'must be an email address');
  if (text.length > 254) throw validationError(field, 'is longer than 254 characters');
  if (/[\s\p{Cc}\p{Cf}]/u.test(text)) throw validationError(field, 'must not contain spaces, control or invisible characters');
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1 || text.indexOf('@') !== at) throw validationError(field, 'must be one address of the form local@domain');
  const local = text.slice(0, at).toLowerCase();
  if (local.length > 64) throw validationError(field, 'has a local part (before @) longer than 64 characters');
  if (!LOCAL_PART.test(local) || local.includes('..')) {
    throw validationError(field, 'has an invalid local part (before @): ASCII letters, digits and inner . _ - only, no double dots');
  }
  const domain = text.slice(at + 1);
  if (domain.endsWith('.')) throw validationError(field, 'must not end with a dot');
  const ascii = parseDomainName(domain, [], field).ascii;
  const address = `${local}@${ascii}`;
  if (address.length > 254) throw validationError(field, 'is longer than 254 characters');
  return { address, local, domain: ascii };
}

/** A display name is shown next to the address in mail clients: one line of printable text. */
export function parseDisplayName(input: string | undefined, field = 'display_name'): string | null {
  if (input === undefined) return null;
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(input)) throw validationError(field, 'must be one line without control or invisible characters');
  const text = input.trim();
  if (text === '') return null;
  if (text.length > 100) throw validationError(field, 'is longer than 100 characters');
  return text;
}
