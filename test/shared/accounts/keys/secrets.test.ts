// API key material: mode prefixes, display prefix, randomness and the SHA-256 lookup hash.
import { createHash } from 'node:crypto';
import t from 'tap';
import { generateApiKey, hashApiKey } from '../../../../shared/accounts/keys/secrets.js';

t.test('a key starts with its mode prefix and shows six random characters as its prefix', async (t) => {
  for (const modePrefix of ['mp_live_', 'mp_test_']) {
    const { key, prefix } = generateApiKey(modePrefix);
    t.ok(key.startsWith(modePrefix), `${modePrefix} key starts with its prefix`);
    t.equal(prefix, key.slice(0, modePrefix.length + 6), 'display prefix = mode prefix + 6 characters of the key');
    t.match(key.slice(modePrefix.length), /^[A-Za-z0-9_-]{43}$/, '32 random bytes in base64url (header safe)');
  }
});

t.test('keys are unique', async (t) => {
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) seen.add(generateApiKey('mp_live_').key);
  t.equal(seen.size, 500, 'no repeats in 500 keys');
});

t.test('the lookup hash is the lowercase hex SHA-256 of the whole key', async (t) => {
  const { key } = generateApiKey('mp_live_');
  const hash = hashApiKey(key);
  t.equal(hash, createHash('sha256').update(key).digest('hex'));
  t.match(hash, /^[0-9a-f]{64}$/);
  t.equal(hashApiKey(key), hash, 'deterministic');
  t.not(hashApiKey(`${key}x`), hash, 'a different key hashes differently');
  // The mode prefix is part of what is hashed: a test key never matches the live key with the same random part.
  const random = key.slice('mp_live_'.length);
  t.not(hashApiKey(`mp_test_${random}`), hash, 'the same random part under the other mode hashes differently');
  t.not(hash, createHash('sha256').update(random).digest('hex'), 'the whole key is hashed, not only its random part');
});
