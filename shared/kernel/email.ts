// E-mail addresses as Mailpath stores and compares them: one strict normalization shared by contacts, suppressions and the send path.
import { parseDomainName } from '../deliverability/domains/names.js';
import { validationError } from './errors.js';

/** RFC 5322 dot-atom: quoted local parts and comments are legal but never worth accepting here. */
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/i;

/**
 * Checks an address and returns the form the list stores: trimmed, lower-cased, domain in IDNA (ASCII) form.
 * Throws 422 naming `field`. Line breaks are refused rather than trimmed: they are a header-injection attempt.
 */
export function normalizeEmail(input: string, field = 'email'): string {
  if (/[\r\n\u0085\u2028\u2029]/.test(input)) throw validationError(field, 'must not contain line breaks');
  // Only spaces and tabs are trimmed: any other invisible character is refused below, wherever it is.
  const text = input.replace(/^[ \t]+|[ \t]+$/g, '');
  if (text === '') throw validationError(field, 'must be an email address');
  if (text.length > 254) throw validationError(field, 'is longer than 254 characters');
  if (/[\s\p{Cc}\p{Cf}]/u.test(text)) throw validationError(field, 'must not contain spaces, control or invisible characters');
  const parts = text.split('@');
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw validationError(field, 'must be one address of the form local@domain');
  const [local, domain] = parts as [string, string];
  if (local.length > 64) throw validationError(field, 'has a local part (before @) longer than 64 characters');
  if (!LOCAL_PART.test(local))
    throw validationError(
      field,
      "has an invalid local part (before @): ASCII letters, digits and !#$%&'*+/=?^_`{|}~.- only, no leading, trailing or double dots",
    );
  if (domain.endsWith('.')) throw validationError(`${field} domain`, 'must not end with a dot');
  const ascii = parseDomainName(domain, [], `${field} domain`).ascii;
  const email = `${local.toLowerCase()}@${ascii}`;
  if (email.length > 254) throw validationError(field, 'is longer than 254 characters');
  return email;
}
