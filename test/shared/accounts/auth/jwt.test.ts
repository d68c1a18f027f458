// Session tokens (shared/accounts/auth/jwt.ts): user and mailbox sessions have separate audiences, each verifier refuses the other kind, claims round-trip,
// exp and iat are required.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SignJWT } from 'jose';
import { SessionTokens } from '../../../../shared/accounts/auth/jwt.js';
import { loadConfig } from '../../../../shared/config/index.js';
import type { TestLike } from '../../../helpers/app.js';

async function tokens(t: TestLike): Promise<SessionTokens> {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-jwt-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return SessionTokens.create(loadConfig({ MAILPATH_DATA_DIR: dir, MAILPATH_JWT_SECRET: 'x'.repeat(48) }));
}

t.test('each verifier accepts its own kind only', async (t) => {
  const jwt = await tokens(t);
  const now = new Date('2026-03-02T10:00:00Z');
  const mailboxId = '0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';
  const tenantId = '5a1d2c3b-4e5f-4a6b-9c7d-8e9f0a1b2c3d';
  const mailbox = await jwt.issueMailbox({ mailboxId, tenantId, ttlSeconds: 86_400, now });
  t.same(await jwt.verifyMailbox(mailbox.token, now), {
    mailboxId,
    tenantId,
    issuedAt: now.getTime() / 1000,
    issuedAtMs: now.getTime(),
    expiresAt: now.getTime() / 1000 + 86_400,
  });
  t.equal(await jwt.verify(mailbox.token, now), undefined, 'not a user session');
  const user = await jwt.issue({ userId: mailboxId, tenantId, ttlSeconds: 3600, now });
  t.equal(await jwt.verifyMailbox(user.token, now), undefined, 'a user session is not a mailbox session');
  t.equal(await jwt.verifyMailbox(mailbox.token, new Date(now.getTime() + 86_401_000)), undefined, 'expired');
  t.equal(await jwt.verifyMailbox('not.a.jwt', now), undefined);
});

t.test('a token without exp (or iat) is refused by every verifier, though signed with the real secret', async (t) => {
  const jwt = await tokens(t);
  const key = new TextEncoder().encode('x'.repeat(48));
  const now = new Date('2026-03-02T10:00:00Z');
  const iat = Math.floor(now.getTime() / 1000);
  const userId = '0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';
  const tenantId = '5a1d2c3b-4e5f-4a6b-9c7d-8e9f0a1b2c3d';
  /** A token as the issuer would mint it, with the given claims left out. */
  const forge = (audience: string, claims: Record<string, unknown>, omit: { exp?: boolean; iat?: boolean }) => {
    let token = new SignJWT({ tid: tenantId, iat_ms: now.getTime(), ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(String(claims['mbx'] ?? userId))
      .setIssuer('mailpath')
      .setAudience(audience);
    if (!omit.iat) token = token.setIssuedAt(iat);
    if (!omit.exp) token = token.setExpirationTime(iat + 3600);
    return token.sign(key);
  };

  // The forgeries are well made: with exp and iat each verifier accepts them.
  t.ok(await jwt.verify(await forge('mailpath-api', {}, {}), now), 'session with exp accepted');
  t.ok(await jwt.verifyMailbox(await forge('mailpath-mailbox', { mbx: userId }, {}), now), 'mailbox session with exp accepted');
  t.ok(await jwt.verifyTotpChallenge(await forge('mailpath-totp-challenge', { pur: 'totp_challenge' }, {}), now), '2FA challenge with exp accepted');

  for (const omit of [{ exp: true }, { iat: true }]) {
    const what = omit.exp ? 'exp' : 'iat';
    t.equal(await jwt.verify(await forge('mailpath-api', {}, omit), now), undefined, `session without ${what}`);
    t.equal(await jwt.verifyMailbox(await forge('mailpath-mailbox', { mbx: userId }, omit), now), undefined, `mailbox session without ${what}`);
    t.equal(
      await jwt.verifyTotpChallenge(await forge('mailpath-totp-challenge', { pur: 'totp_challenge' }, omit), now),
      undefined,
      `2FA challenge without ${what}`,
    );
  }
  const farFuture = new Date('2099-01-01T00:00:00Z');
  t.equal(await jwt.verify(await forge('mailpath-api', {}, { exp: true }), farFuture), undefined, 'so it can never outlive its purpose');
});
