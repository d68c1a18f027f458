// The license signing key: made once even when processes ask at the same moment, sealed at rest, and signing keys the validation accepts.
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { SealedBox } from '../../../../shared/kernel/secrets/sealed-box.js';
import { currentSigningKey } from '../../../../shared/accounts/licenses/signing-key.js';
import { signLicense } from '../../../../shared/accounts/licenses/tokens.js';
import { validateLicenseKey } from '../../../../shared/accounts/licenses/validate.js';
import { createTestDatabase } from '../../../helpers/db.js';

t.test('one signing key, sealed, made once under concurrency', async (t) => {
  const db = await createTestDatabase();
  const a = connect(db.url, createLogger('silent'), { max: 2 });
  const b = connect(db.url, createLogger('silent'), { max: 2 });
  t.teardown(async () => {
    await a.end({ timeout: 5 });
    await b.end({ timeout: 5 });
    await db.drop();
  });
  const vault = new SealedBox(randomBytes(32));
  const keys = await Promise.all([currentSigningKey({ sql: a, vault }), currentSigningKey({ sql: b, vault }), currentSigningKey({ sql: a, vault })]);
  t.equal(new Set(keys.map((k) => k.kid)).size, 1, 'three callers, one key');
  const rows = await a<{ kid: string; private_key_sealed: Buffer }[]>`select kid, private_key_sealed from license_signing_keys`;
  t.equal(rows.length, 1);
  const der = keys[0]!.privateKey.export({ format: 'der', type: 'pkcs8' });
  t.equal(rows[0]!.private_key_sealed.indexOf(der.subarray(-32)), -1, 'the private key is not stored in the clear');
  await t.rejects(currentSigningKey({ sql: a, vault: new SealedBox(randomBytes(32)) }), /different master key/, 'another master key cannot open it');

  // A token signed with the key but never recorded (not issued here) is unknown.
  const unrecorded = await signLicense(keys[0]!, {
    id: randomUUID(),
    plan_id: 'pro',
    tenant_id: null,
    issued_at: new Date(),
    expires_at: null,
    issuer: 'https://x.test',
  });
  t.same(await validateLicenseKey({ sql: a, clock: new ManualClock() }, unrecorded), { valid: false, reason: 'unknown' });
});
