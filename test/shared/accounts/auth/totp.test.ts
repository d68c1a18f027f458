// TOTP primitives and recovery codes: step matching with window and replay bound, sealing bound to the user, code formats and matching.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { generate } from 'otplib';
import { SealedBox, SealError } from '../../../../shared/kernel/secrets/sealed-box.js';
import { matchTotpStep, newTotpSecret, openTotpSecret, otpauthUrl, sealTotpSecret, timeStepAt, totpCodeAt } from '../../../../shared/accounts/auth/totp.js';
import {
  hashRecoveryCodes,
  looksLikeRecoveryCode,
  matchRecoveryCode,
  newRecoveryCodes,
  normalizeRecoveryCode,
  RECOVERY_CODE_COUNT,
} from '../../../../shared/accounts/auth/recovery-codes.js';

const at = new Date(Date.UTC(2026, 0, 15, 12, 0, 10));

t.test('a code matches its own step within the window, never beyond it or at or before the last used step', async (t) => {
  const secret = newTotpSecret();
  const step = timeStepAt(at);
  const codeOf = (offset: number) => generate({ secret, epoch: at.getTime() / 1000 + offset * 30 });
  t.equal(await matchTotpStep(secret, await codeOf(0), at, 1, null), step);
  t.equal(await matchTotpStep(secret, await codeOf(-1), at, 1, null), step - 1, 'one step behind (slow phone clock)');
  t.equal(await matchTotpStep(secret, await codeOf(1), at, 1, null), step + 1);
  t.equal(await matchTotpStep(secret, await codeOf(2), at, 1, null), undefined, 'two steps away is outside a window of 1');
  t.equal(await matchTotpStep(secret, await codeOf(1), at, 0, null), undefined, 'window 0: the current step only');
  t.equal(await matchTotpStep(secret, await codeOf(0), at, 1, step), undefined, 'the last used step is a replay');
  t.equal(await matchTotpStep(secret, await codeOf(-1), at, 1, step), undefined, 'so is an earlier one');
  t.equal(await matchTotpStep(secret, await codeOf(1), at, 1, step), step + 1, 'a later step is fine');
  for (const bad of ['', '12345', '1234567', 'abcdef', ' 123456'])
    t.equal(await matchTotpStep(secret, bad, at, 1, null), undefined, `malformed ${JSON.stringify(bad)}`);
  t.equal(await totpCodeAt(secret, at), await codeOf(0));
});

t.test('the otpauth URL names the issuer and the account', async (t) => {
  const url = otpauthUrl('ann+2fa@example.test', 'JBSWY3DPEHPK3PXP');
  t.equal(url, 'otpauth://totp/Mailpath:ann%2B2fa%40example.test?secret=JBSWY3DPEHPK3PXP&issuer=Mailpath');
});

t.test('a sealed secret opens for its user only', async (t) => {
  const vault = new SealedBox(randomBytes(32));
  const sealed = sealTotpSecret(vault, 'user-a', 'JBSWY3DPEHPK3PXP');
  t.equal(openTotpSecret(vault, 'user-a', sealed), 'JBSWY3DPEHPK3PXP');
  t.throws(() => openTotpSecret(vault, 'user-b', sealed), SealError);
});

t.test('recovery codes: 8 distinct, typed loosely, matched against bcrypt hashes', async (t) => {
  const codes = newRecoveryCodes();
  t.equal(codes.length, RECOVERY_CODE_COUNT);
  t.equal(new Set(codes).size, RECOVERY_CODE_COUNT);
  for (const c of codes) {
    t.match(c, /^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/, 'no look-alike characters');
    t.ok(looksLikeRecoveryCode(c));
  }
  t.equal(normalizeRecoveryCode(' AbCdE - fGhJk '), 'abcdefghjk');
  for (const bad of ['123456', 'abcde-fghj', 'abcde-fghj0', 'abcde-fghjkl', '']) t.notOk(looksLikeRecoveryCode(bad), `not a code: ${bad}`);

  const hashes = await hashRecoveryCodes(codes, 4);
  const stored = hashes.map((code_hash, i) => ({ id: `id-${i}`, code_hash }));
  t.equal(await matchRecoveryCode(codes[5]!, stored), 'id-5');
  t.equal(await matchRecoveryCode(codes[5]!.toUpperCase().replace('-', ''), stored), 'id-5');
  t.equal(await matchRecoveryCode('abcde-fghjk', stored), undefined);
  t.equal(
    await matchRecoveryCode(
      codes[5]!,
      stored.filter((s) => s.id !== 'id-5'),
    ),
    undefined,
    'a used (removed) code matches nothing',
  );
});
