// AES-256-GCM sealing of secrets at rest, bound to the row they belong to (associated data).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { keyFingerprint } from './master-key.js';

const FORMAT_VERSION = 1;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const FINGERPRINT_BYTES = 4;
const HEADER_BYTES = 1 + FINGERPRINT_BYTES + IV_BYTES + TAG_BYTES;

/** A sealed value could not be opened: wrong master key, a value moved to another row, or tampering. */
export class SealError extends Error {
  override name = 'SealError';
}

/**
 * Seals and opens secrets with one master key. Layout of a sealed value:
 * version (1) | master-key fingerprint (4) | IV (12) | GCM tag (16) | ciphertext.
 * The context string (e.g. "dkim:<key id>") is authenticated, so a sealed value copied
 * into another row does not open there.
 */
export class SealedBox {
  private readonly fingerprint: Buffer;

  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('the master key must be 32 bytes');
    this.fingerprint = keyFingerprint(key);
  }

  seal(plaintext: Buffer | string, context: string): Buffer {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([Buffer.from([FORMAT_VERSION]), this.fingerprint, iv, cipher.getAuthTag(), body]);
  }

  open(sealed: Buffer, context: string): Buffer {
    if (sealed.length < HEADER_BYTES || sealed[0] !== FORMAT_VERSION) throw new SealError('not a sealed value of a known format');
    if (!sealed.subarray(1, 1 + FINGERPRINT_BYTES).equals(this.fingerprint)) {
      throw new SealError('sealed with a different master key (check MAILPATH_MASTER_KEY or the data dir master.key)');
    }
    const ivStart = 1 + FINGERPRINT_BYTES;
    const iv = sealed.subarray(ivStart, ivStart + IV_BYTES);
    const tag = sealed.subarray(ivStart + IV_BYTES, HEADER_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.key, iv);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(tag);
    try {
      return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]);
    } catch {
      throw new SealError('sealed value failed authentication (tampered, or sealed for another row)');
    }
  }
}
