// TOTP primitives (RFC 6238 via otplib): secrets, the otpauth URL and its QR code, code checks that report the matched time step.
import { generate, generateSecret, generateURI, verify } from 'otplib';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';

export const TOTP_ISSUER = 'Mailpath';
/** RFC 6238 defaults, which every authenticator app assumes: 6 digits, 30-second steps, SHA-1. */
export const TOTP_PERIOD_SECONDS = 30;
const SIX_DIGITS = /^\d{6}$/;

/** A new base32 secret of 20 random bytes (160 bits, RFC 4226's recommended length). */
export function newTotpSecret(): string {
  return generateSecret({ length: 20 });
}

/** otpauth://totp/Mailpath:<email>?secret=…&issuer=Mailpath, the URL authenticator apps scan. */
export function otpauthUrl(email: string, secret: string): string {
  return generateURI({ issuer: TOTP_ISSUER, label: email, secret });
}

/** The otpauth URL as a PNG QR code in a data: URL (medium error correction, quiet zone of 2 modules). */
export async function qrCodeDataUrl(url: string): Promise<string> {
  // Imported on the first enrolment: qrcode and its PNG encoder are ~60 modules every API process would load otherwise.
  const { default: QRCode } = await import('qrcode');
  return QRCode.toDataURL(url, { type: 'image/png', errorCorrectionLevel: 'M', margin: 2, width: 240 });
}

export function looksLikeTotpCode(code: string): boolean {
  return SIX_DIGITS.test(code);
}

/** The RFC 6238 time step of an instant. */
export function timeStepAt(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_PERIOD_SECONDS);
}

/**
 * The time step a 6-digit code belongs to, when it is valid within `windowSteps` steps of `at`
 * and later than `afterStep` (the last step accepted: a code is never taken twice); else undefined.
 */
export async function matchTotpStep(secret: string, code: string, at: Date, windowSteps: number, afterStep: number | null): Promise<number | undefined> {
  if (!looksLikeTotpCode(code)) return undefined;
  const result = await verify({
    secret,
    token: code,
    epoch: Math.floor(at.getTime() / 1000),
    epochTolerance: windowSteps * TOTP_PERIOD_SECONDS,
    ...(afterStep !== null ? { afterTimeStep: afterStep } : {}),
  });
  // The union also covers HOTP results, which carry no time step.
  return result.valid && 'timeStep' in result ? result.timeStep : undefined;
}

/** The code for an instant (tests and tools; the server only ever checks codes). */
export function totpCodeAt(secret: string, at: Date): Promise<string> {
  return generate({ secret, epoch: Math.floor(at.getTime() / 1000) });
}

/** Associated data binding a sealed secret to its user, so a value copied to another row does not open. */
const sealContext = (userId: string) => `totp-secret:${userId}`;

export function sealTotpSecret(vault: SealedBox, userId: string, secret: string): Buffer {
  return vault.seal(secret, sealContext(userId));
}

export function openTotpSecret(vault: SealedBox, userId: string, sealed: Buffer): string {
  return vault.open(sealed, sealContext(userId)).toString('utf8');
}
