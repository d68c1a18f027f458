// Single-use 2FA recovery codes: generation, their bcrypt hashes, and finding which stored code a typed one is.
import { randomInt } from 'node:crypto';
import bcrypt from 'bcrypt';

/** Codes per enrolment (spec: Limits). */
export const RECOVERY_CODE_COUNT = 8;

// Lower-case letters and digits without the look-alikes 0/o, 1/l/i: codes are read off paper and typed.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const GROUP = 5;

/** A code like `k7m2x-9qfpa`: 10 characters of a 31-letter alphabet, about 49.5 bits. */
export function newRecoveryCode(): string {
  let raw = '';
  for (let i = 0; i < GROUP * 2; i++) raw += ALPHABET[randomInt(ALPHABET.length)];
  return `${raw.slice(0, GROUP)}-${raw.slice(GROUP)}`;
}

export function newRecoveryCodes(): string[] {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newRecoveryCode());
  return [...codes];
}

/** The form hashed and compared: case, spaces and hyphens as typed do not matter. */
export function normalizeRecoveryCode(input: string): string {
  return input.toLowerCase().replace(/[\s-]/g, '');
}

/** Whether a typed value can be a recovery code at all (so a typo never costs eight bcrypt checks). */
export function looksLikeRecoveryCode(input: string): boolean {
  const code = normalizeRecoveryCode(input);
  return code.length === GROUP * 2 && [...code].every((c) => ALPHABET.includes(c));
}

export function hashRecoveryCodes(codes: string[], cost: number): Promise<string[]> {
  return Promise.all(codes.map((c) => bcrypt.hash(normalizeRecoveryCode(c), cost)));
}

/**
 * The id of the stored code the input matches, or undefined. Every candidate is compared (in
 * parallel, on libuv's thread pool) so the time taken does not say which one matched.
 */
export async function matchRecoveryCode(input: string, stored: { id: string; code_hash: string }[]): Promise<string | undefined> {
  if (!looksLikeRecoveryCode(input)) return undefined;
  const code = normalizeRecoveryCode(input);
  const results = await Promise.all(stored.map((s) => bcrypt.compare(code, s.code_hash)));
  const index = results.indexOf(true);
  return index === -1 ? undefined : stored[index]!.id;
}
