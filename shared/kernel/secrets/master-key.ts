// The master key that seals secrets at rest (DKIM private keys): MAILPATH_MASTER_KEY, or one generated once into the data dir.
import { createHash, randomBytes } from 'node:crypto';
import { decodeMasterKey, type Config } from '../../config/index.js';
import { loadOrCreate } from '../data-dir.js';

export const MASTER_KEY_FILE = 'master.key';

/**
 * The 32-byte master key. Several processes sharing one database must share it
 * (set MAILPATH_MASTER_KEY), as they must share the JWT secret.
 */
export async function loadMasterKey(config: Config): Promise<Buffer> {
  if (config.masterKey) return config.masterKey;
  const text = await loadOrCreate(config.dataDir, MASTER_KEY_FILE, () => `${randomBytes(32).toString('hex')}\n`);
  const key = decodeMasterKey(text);
  if (!key) throw new Error(`${MASTER_KEY_FILE} in the data dir does not hold a 32-byte key (64 hex digits)`);
  return key;
}

/** A short public fingerprint of a master key, stored beside each sealed value to name the key it needs. */
export function keyFingerprint(key: Buffer): Buffer {
  return createHash('sha256').update('mailpath-master-key-id').update(key).digest().subarray(0, 4);
}
