// Session tokens (shared/auth/jwt.ts): user and mailbox sessions have separate audiences, each verifier refuses the other kind, claims round-trip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { SessionTokens } from '../../../shared/auth/jwt.js';
import { loadConfig } from '../../../shared/config/index.js';
import type { TestLike } from '../../helpers/app.js';

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
  t.same(await jwt.verifyMailbox(mailbox.token, now), { mailboxId, tenantId, issuedAt: now.getTime() / 1000, issuedAtMs: now.getTime(), expiresAt: now.getTime() / 1000 + 86_400 });
  t.equal(await jwt.verify(mailbox.token, now), undefined, 'not a user session');
  const user = await jwt.issue({ userId: mailboxId, tenantId, ttlSeconds: 3600, now });
  t.equal(await jwt.verifyMailbox(user.token, now), undefined, 'a user session is not a mailbox session');
  t.equal(await jwt.verifyMailbox(mailbox.token, new Date(now.getTime() + 86_401_000)), undefined, 'expired');
  t.equal(await jwt.verifyMailbox('not.a.jwt', now), undefined);
});
