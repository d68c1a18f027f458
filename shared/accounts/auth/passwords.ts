// Password hashing (bcrypt) and the strength policy applied at registration and password change.
import bcrypt from 'bcrypt';
import { validationError } from '../../kernel/errors.js';

// The 50 most common leaked passwords of 10+ characters; refused outright.
const COMMON = new Set([
  '1234567890',
  '0123456789',
  'qwertyuiop',
  'password123',
  'password1234',
  'passw0rd123',
  '1q2w3e4r5t',
  'qwerty123456',
  '1qaz2wsx3edc',
  'iloveyou123',
  'abcdefghij',
  'abc1234567',
  'a1234567890',
  'qwertyuiop1',
  'football123',
  'welcome123',
  'administrator',
  'letmein123',
  'monkey12345',
  'dragon12345',
  'sunshine123',
  'princess123',
  'baseball123',
  'superman123',
  'trustno1234',
  'changeme123',
  'password12345',
  'qazwsxedcrfv',
  'zaq12wsxcde',
  '11111111111',
  '1111111111',
  '0000000000',
  'aaaaaaaaaa',
  'asdfghjkl1',
  'asdfghjkl;',
  'zxcvbnm123',
  'mailpath123',
  'passwordpassword',
  'qwerty12345',
  '123456789a',
  '12345678910',
  '9876543210',
  'michael123',
  'jennifer123',
  'computer123',
  'whatever123',
  'starwars123',
  'master12345',
]);

/** Bcrypt only looks at the first 72 bytes; longer passwords are refused rather than silently truncated. */
const BCRYPT_MAX_BYTES = 72;

/** Returns why a password is too weak, or undefined when it is acceptable. */
export function passwordWeakness(password: string, minLength: number, context: string[] = []): string | undefined {
  if (password.length < minLength) return `must be at least ${minLength} characters`;
  if (Buffer.byteLength(password, 'utf8') > BCRYPT_MAX_BYTES) return `must be at most ${BCRYPT_MAX_BYTES} bytes`;
  if (new Set(password).size < 4) return 'uses too few distinct characters';
  const lower = password.toLowerCase();
  if (COMMON.has(lower)) return 'is a commonly used password';
  const classes = [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/].filter((re) => re.test(password)).length;
  if (classes < 2) return 'must mix at least two of lowercase, uppercase, digits and symbols';
  for (const word of context) {
    if (word.length >= 4 && lower.includes(word.toLowerCase())) return 'must not contain your email or tenant name';
  }
  return undefined;
}

/**
 * A new password, checked and hashed: 422 naming `field` when it is too weak. `context` holds words it must not
 * contain (the e-mail's local part, the tenant's slug). Hashed before any transaction, so bcrypt's time never holds
 * a connection or a lock.
 */
export async function acceptNewPassword(
  password: string,
  auth: { min_password_length: number; bcrypt_cost: number },
  field: string,
  context: string[],
): Promise<string> {
  const weakness = passwordWeakness(password, auth.min_password_length, context);
  if (weakness) throw validationError(field, weakness);
  return hashPassword(password, auth.bcrypt_cost);
}

/** The words a user's password must not contain: the local part of the e-mail and the tenant's slug. */
export const passwordContext = (email: string, tenantSlug?: string | null): string[] => [email.split('@')[0]!, ...(tenantSlug ? [tenantSlug] : [])];

export function hashPassword(password: string, cost: number): Promise<string> {
  return bcrypt.hash(password, cost);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return bcrypt.compare(password, hash);
}

let dummyHash: Promise<string> | undefined;

/** Spends the same bcrypt time as a real check, so unknown accounts cannot be told apart by timing. */
export async function burnPasswordCheck(password: string, cost: number): Promise<false> {
  dummyHash ??= bcrypt.hash('mailpath-timing-equalizer', cost);
  await bcrypt.compare(password, await dummyHash);
  return false;
}
