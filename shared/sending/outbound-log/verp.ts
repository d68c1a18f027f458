// VERP bounce addresses: the envelope sender of each send names it, signed, so a later bounce maps back to exactly that send.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

const LOCAL_PREFIX = 'b';
const SIGNATURE_BYTES = 5;

/** A key for bounce-address signatures derived from the master key (never the master key itself). */
export function verpKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'mailpath verp v1', 32));
}

function signature(key: Buffer, sendId: string): string {
  return createHmac('sha256', key).update(sendId).digest().subarray(0, SIGNATURE_BYTES).toString('hex');
}

/** b-<send id, 32 hex>-<10 hex signature>@<mail host>: 45 characters of local part, well under 64. */
export function bounceAddress(key: Buffer, sendId: string, mailHost: string): string {
  const id = sendId.replace(/-/g, '').toLowerCase();
  return `${LOCAL_PREFIX}-${id}-${signature(key, id)}@${mailHost}`;
}

/**
 * The send a bounce was addressed to, or undefined when the address is not one of ours, is
 * malformed or carries a wrong signature (a forged bounce must not suppress anyone).
 */
export function sendIdOfBounce(key: Buffer, address: string, mailHost: string): string | undefined {
  const match = /^b-([0-9a-f]{32})-([0-9a-f]{10})@(.+)$/i.exec(address.trim());
  if (!match || match[3]!.toLowerCase() !== mailHost.toLowerCase()) return undefined;
  const id = match[1]!.toLowerCase();
  const expected = Buffer.from(signature(key, id), 'hex');
  const given = Buffer.from(match[2]!.toLowerCase(), 'hex');
  if (!timingSafeEqual(expected, given)) return undefined;
  return `${id.slice(0, 8)}-${id.slice(8, 12)}-${id.slice(12, 16)}-${id.slice(16, 20)}-${id.slice(20)}`;
}
