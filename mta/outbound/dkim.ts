// DKIM-signs an outbound message with the sending domain's live key (mailauth, rsa-sha256, relaxed/relaxed).
import { dkimSign } from 'mailauth/lib/dkim/sign.js';

export interface DkimSigningKey {
  domain: string;
  selector: string;
  privateKeyPem: string;
}

/**
 * The headers covered when present: the identity and content headers receivers judge (From, To,
 * Subject, Date, Message-ID, MIME) and the list and threading headers.
 */
export const SIGNED_HEADERS = [
  'from', 'to', 'cc', 'reply-to', 'subject', 'date', 'message-id', 'mime-version', 'content-type',
  'content-transfer-encoding', 'list-unsubscribe', 'list-unsubscribe-post', 'in-reply-to', 'references',
];

export class DkimSignError extends Error {
  override name = 'DkimSignError';
}

/** The message with its DKIM-Signature header prepended. */
export async function signMessage(message: Buffer, key: DkimSigningKey, at: Date): Promise<Buffer> {
  const result = await dkimSign(message, {
    canonicalization: 'relaxed/relaxed',
    algorithm: 'rsa-sha256',
    signTime: at,
    headerList: SIGNED_HEADERS.join(':'),
    signatureData: [{ signingDomain: key.domain, selector: key.selector, privateKey: key.privateKeyPem, canonicalization: 'relaxed/relaxed', algorithm: 'rsa-sha256' }],
    // mailauth 4's typings describe one flat signature; the signer reads signatureData (lib/dkim/dkim-signer.js).
  } as unknown as Parameters<typeof dkimSign>[1]);
  if (result.errors && result.errors.length > 0) {
    throw new DkimSignError(`DKIM signing for ${key.domain} failed: ${result.errors.map((e) => (e as Error).message ?? String(e)).join('; ')}`);
  }
  return Buffer.concat([Buffer.from(result.signatures, 'utf8'), message]);
}
