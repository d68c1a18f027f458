// DKIM key pairs: generation (RSA), dated selectors, and sealing of the private half at rest.
import { generateKeyPair, randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { promisify } from 'node:util';
import { Gate } from '../../kernel/concurrency.js';
import type { Queryable } from '../../db/connection.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { activeSigningKey, insertDkimKey, type DkimKeyRow, type KeyState } from './queries.js';

const generateKeyPairAsync = promisify(generateKeyPair);
/**
 * RSA generation is pure CPU: more at once than there are cores only stretches every one of
 * them (4 at once on 2 cores: p99 0.9 s against 0.4 s for 2), so later requests queue instead.
 */
const keyGenerations = new Gate(Math.max(1, availableParallelism()));

export interface GeneratedKey {
  bits: number;
  /** Base64 SubjectPublicKeyInfo: the p= tag of the DNS record. */
  publicKey: string;
  privateKeyPem: string;
}

/** Generates off the event loop (libuv thread pool): a 2048-bit key takes tens to hundreds of ms. */
export async function generateDkimKey(bits: number): Promise<GeneratedKey> {
  const { publicKey, privateKey } = await keyGenerations.run(() =>
    generateKeyPairAsync('rsa', {
      modulusLength: bits,
      publicKeyEncoding: { type: 'spki', format: 'der' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    }),
  );
  return { bits, publicKey: publicKey.toString('base64'), privateKeyPem: privateKey };
}

/** <prefix><yyyymmdd> of the UTC day, with -2, -3... when the domain already has that selector. */
export function nextSelector(prefix: string, at: Date, taken: readonly string[]): string {
  const base = `${prefix}${at.toISOString().slice(0, 10).replace(/-/g, '')}`;
  if (!taken.includes(base)) return base;
  for (let n = 2; n < 10_000; n++) {
    const candidate = `${base}-${n}`;
    if (!taken.includes(candidate)) return candidate;
  }
  throw new Error(`no free DKIM selector for ${base}`);
}

/**
 * The first selector of a new claim: <prefix><yyyymmdd>-<8 random hex>. Several tenants may claim
 * one name, so their first keys must not share a DNS host: a host holding two DKIM records breaks
 * verification at receivers that read only one. Random, not "the next free one": a selector
 * derived from the other claims of the name would tell a claimant that others exist.
 */
export function claimSelector(prefix: string, at: Date): string {
  return `${nextSelector(prefix, at, [])}-${randomBytes(4).toString('hex')}`;
}

/** Associated data binding a sealed private key to its domain and selector. */
const sealContext = (domainId: string, selector: string) => `dkim-private-key:${domainId}:${selector}`;

export async function storeKey(
  db: Queryable,
  vault: SealedBox,
  k: { tenantId: string; domainId: string; selector: string; key: GeneratedKey; state: KeyState; at: Date },
): Promise<DkimKeyRow> {
  return insertDkimKey(db, {
    tenantId: k.tenantId,
    domainId: k.domainId,
    selector: k.selector,
    keyBits: k.key.bits,
    publicKey: k.key.publicKey,
    privateKeySealed: vault.seal(k.key.privateKeyPem, sealContext(k.domainId, k.selector)),
    state: k.state,
    at: k.at,
  });
}

export interface SigningKey {
  selector: string;
  privateKeyPem: string;
}

/** The live signer of a domain with its private key opened, or undefined when the domain has none. */
export async function loadSigningKey(db: Queryable, vault: SealedBox, domainId: string): Promise<SigningKey | undefined> {
  const row = await activeSigningKey(db, domainId);
  if (!row) return undefined;
  return { selector: row.selector, privateKeyPem: vault.open(row.private_key_sealed, sealContext(domainId, row.selector)).toString('utf8') };
}
