// API key material: generation, the display prefix and the SHA-256 lookup hash (the plaintext is never stored).
import { hash, randomBytes } from 'node:crypto';

export type KeyMode = 'live' | 'test';

/** Characters of the random part shown as the key's prefix, so a user can tell keys apart. */
const PREFIX_RANDOM_CHARS = 6;

export function generateApiKey(modePrefix: string): { key: string; prefix: string } {
  // 32 random bytes = 256 bits; base64url keeps it copy-paste and header safe.
  const key = modePrefix + randomBytes(32).toString('base64url');
  return { key, prefix: key.slice(0, modePrefix.length + PREFIX_RANDOM_CHARS) };
}

/** The public prefix (as the API shows it) of something shaped like a key of one of `modePrefixes`; undefined otherwise. Safe to log. */
export function displayPrefixOf(candidate: string, modePrefixes: readonly string[]): string | undefined {
  const mode = modePrefixes.find((p) => candidate.startsWith(p));
  return mode === undefined ? undefined : candidate.slice(0, mode.length + PREFIX_RANDOM_CHARS);
}

export function hashApiKey(key: string): string {
  // One-shot hash (no Hash object): the API hashes the presented key on every request.
  return hash('sha256', key, 'hex');
}
