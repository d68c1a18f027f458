// The Ed25519 key pair that signs license keys: generated once, its private half sealed with the master key in the database (like DKIM keys), so every
// process sharing the database signs alike.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import type { Sql } from '../../db/connection.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { insertSigningKey, lockSigningKeyCreation, newestSigningKey, signingKeyByKid, type SigningKeyRow } from './queries.js';

export interface LicensePublicKey {
  kid: string;
  /** {kty: 'OKP', crv: 'Ed25519', x}: what a self-hosted instance needs to check a key's signature offline. */
  jwk: { kty: string; crv: string; x: string };
}

export interface LicenseSigningKey extends LicensePublicKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

export interface SigningKeyDeps {
  sql: Sql;
  vault: SealedBox;
}

const sealContext = (kid: string) => `license-signing:${kid}`;

function open(deps: SigningKeyDeps, row: SigningKeyRow): LicenseSigningKey {
  const der = deps.vault.open(row.private_key_sealed, sealContext(row.kid));
  const privateKey = createPrivateKey({ key: der, format: 'der', type: 'pkcs8' });
  return { kid: row.kid, jwk: row.public_jwk, privateKey, publicKey: createPublicKey(privateKey) };
}

/** The public half of a stored key (no unsealing: verification needs only this). */
export function publicKeyOf(row: Pick<SigningKeyRow, 'kid' | 'public_jwk'>): KeyObject {
  return createPublicKey({ key: row.public_jwk, format: 'jwk' });
}

/**
 * The newest signing key, created on first use. Creation runs under an advisory lock, so processes starting
 * together agree on one key instead of each signing with its own.
 */
export async function currentSigningKey(deps: SigningKeyDeps): Promise<LicenseSigningKey> {
  const existing = await newestSigningKey(deps.sql);
  if (existing) return open(deps, existing);
  const row = await deps.sql.begin(async (tx) => {
    await lockSigningKeyCreation(tx);
    const raced = await newestSigningKey(tx);
    if (raced) return raced;
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const jwk = publicKey.export({ format: 'jwk' }) as { kty: string; crv: string; x: string };
    // The kid is derived from the public key, so it names the key wherever the token travels.
    const kid = `ed25519-${createHash('sha256').update(jwk.x).digest('base64url').slice(0, 16)}`;
    const der = privateKey.export({ format: 'der', type: 'pkcs8' });
    return insertSigningKey(tx, { kid, public_jwk: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, private_key_sealed: deps.vault.seal(der, sealContext(kid)) });
  });
  return open(deps, row);
}

/** The verification key a token's header names, or undefined when no such key was ever made here. */
export async function verificationKey(sql: Sql, kid: string): Promise<KeyObject | undefined> {
  const row = await signingKeyByKid(sql, kid);
  return row ? publicKeyOf(row) : undefined;
}
