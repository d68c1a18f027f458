// Signed tokens for the public links Mailpath puts in mail (open pixel, click redirect, unsubscribe): what a token says is fixed by whoever holds the key,
// and a token for one purpose never works for another.
import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/** What a token is for; part of what is signed, so a click token can never be replayed as an unsubscribe. */
export type TokenPurpose = 'open' | 'click' | 'owned_click' | 'unsubscribe';

const MAC_BYTES = 16;
const PURPOSE_BYTE: Record<TokenPurpose, number> = { open: 1, click: 2, unsubscribe: 3, owned_click: 4 };

/** A key for link tokens derived from the master key (never the master key itself). */
export function linkTokenKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), 'mailpath link tokens v1', 32));
}

function mac(key: Buffer, purpose: TokenPurpose, payload: Buffer): Buffer {
  return createHmac('sha256', key).update(Buffer.of(PURPOSE_BYTE[purpose])).update(payload).digest().subarray(0, MAC_BYTES);
}

/** `<payload>.<mac>`, both base64url: safe in a URL path and in an e-mail address's local part (no dots inside either half). */
export function signToken(key: Buffer, purpose: TokenPurpose, payload: Buffer): string {
  return `${payload.toString('base64url')}.${mac(key, purpose, payload).toString('base64url')}`;
}

/** The payload of a token made by signToken with this key and purpose, or undefined for anything else. */
export function verifyToken(key: Buffer, purpose: TokenPurpose, token: string): Buffer | undefined {
  const match = /^([A-Za-z0-9_-]*)\.([A-Za-z0-9_-]{22})$/.exec(token);
  if (!match) return undefined;
  const payload = Buffer.from(match[1]!, 'base64url');
  // Refuse a non-canonical encoding, so one payload has exactly one valid token.
  if (payload.toString('base64url') !== match[1]) return undefined;
  const given = Buffer.from(match[2]!, 'base64url');
  // The MAC's last character carries 2 bits and 4 unused ones: without this check, four spellings would verify.
  if (given.toString('base64url') !== match[2]) return undefined;
  return given.length === MAC_BYTES && timingSafeEqual(given, mac(key, purpose, payload)) ? payload : undefined;
}

/** 16 bytes of a UUID (for compact payloads). */
export function uuidBytes(id: string): Buffer {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new Error(`not a UUID: ${id}`);
  return Buffer.from(hex, 'hex');
}

/** The UUID of 16 bytes at `offset`. */
export function uuidAt(bytes: Buffer, offset = 0): string {
  const hex = bytes.subarray(offset, offset + 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
