// SealedBox (AES-256-GCM bound to a context) and the master key: loading, generating once into the data dir, and decoding MAILPATH_MASTER_KEY.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../../../shared/config/index.js';
import { keyFingerprint, loadMasterKey, MASTER_KEY_FILE } from '../../../../shared/kernel/secrets/master-key.js';
import { SealedBox, SealError } from '../../../../shared/kernel/secrets/sealed-box.js';

const HEADER_BYTES = 1 + 4 + 12 + 16;
const SECRET = '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC-a-secret-worth-sealing\n-----END PRIVATE KEY-----\n';

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-sealed-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The error a function throws (undefined if it does not). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

t.test('SealedBox', async (t) => {
  const key = randomBytes(32);
  const box = new SealedBox(key);
  const context = 'dkim-private-key:11111111-1111-4111-8111-111111111111:mp20300101';

  t.test('round trip, of strings and bytes', async (t) => {
    t.equal(box.open(box.seal(SECRET, context), context).toString('utf8'), SECRET);
    const bytes = randomBytes(1000);
    t.ok(box.open(box.seal(bytes, context), context).equals(bytes));
    const empty = box.seal('', context);
    t.equal(empty.length, HEADER_BYTES, 'an empty secret is just the header');
    t.equal(box.open(empty, context).length, 0);
    t.equal(box.open(box.seal('é 🔑', ''), '').toString('utf8'), 'é 🔑', 'an empty context is a context too');
    t.equal(new SealedBox(Buffer.from(key)).open(box.seal(SECRET, context), context).toString('utf8'), SECRET, 'another box with the same key opens it');
  });

  t.test('the layout: version, key fingerprint, random IV, tag, ciphertext; never the plaintext', async (t) => {
    const a = box.seal(SECRET, context);
    const b = box.seal(SECRET, context);
    t.equal(a.length, HEADER_BYTES + Buffer.byteLength(SECRET), 'GCM adds no padding');
    t.equal(a[0], 1, 'format version 1');
    t.ok(a.subarray(1, 5).equals(keyFingerprint(key)), 'the master-key fingerprint follows');
    t.notOk(a.equals(b), 'sealing twice gives different bytes');
    t.notOk(a.subarray(5, 17).equals(b.subarray(5, 17)), 'because the IV is random');
    for (const sealed of [a, b]) {
      t.equal(sealed.indexOf(Buffer.from(SECRET)), -1, 'the plaintext does not appear');
      t.equal(sealed.indexOf(Buffer.from('PRIVATE KEY')), -1, 'nor any recognizable part of it');
    }
  });

  t.test('a different context does not open', async (t) => {
    const sealed = box.seal(SECRET, context);
    for (const other of [`${context}x`, context.replace('mp20300101', 'mp20300102'), '', context.toUpperCase()]) {
      const err = thrown(() => box.open(sealed, other));
      t.ok(err instanceof SealError, JSON.stringify(other));
      t.match((err as Error).message, /failed authentication/);
    }
  });

  t.test('a different master key does not open, and says so', async (t) => {
    const sealed = box.seal(SECRET, context);
    const err = thrown(() => new SealedBox(randomBytes(32)).open(sealed, context));
    t.ok(err instanceof SealError);
    t.match((err as Error).message, /different master key/);
  });

  t.test('tampering is detected', async (t) => {
    const sealed = box.seal(SECRET, context);
    const regions: [string, number][] = [
      ['IV', 5],
      ['IV (last byte)', 16],
      ['tag', 17],
      ['tag (last byte)', 32],
      ['ciphertext (first byte)', 33],
      ['ciphertext (middle)', 33 + 40],
      ['ciphertext (last byte)', sealed.length - 1],
    ];
    for (const [region, at] of regions) {
      const tampered = Buffer.from(sealed);
      tampered[at] = tampered[at]! ^ 0x01;
      const err = thrown(() => box.open(tampered, context));
      t.ok(err instanceof SealError, `a flipped bit in the ${region} is refused`);
      t.match((err as Error).message, /failed authentication/, region);
    }
    const version = Buffer.from(sealed);
    version[0] = 2;
    t.match(
      thrown(() => box.open(version, context)),
      { name: 'SealError', message: /not a sealed value of a known format/ },
      'an unknown version',
    );
    const fingerprint = Buffer.from(sealed);
    fingerprint[2] = fingerprint[2]! ^ 0x80;
    t.match(
      thrown(() => box.open(fingerprint, context)),
      { name: 'SealError', message: /different master key/ },
      'a changed fingerprint',
    );
    const appended = Buffer.concat([sealed, Buffer.from([0])]);
    t.ok(thrown(() => box.open(appended, context)) instanceof SealError, 'an appended byte');
  });

  t.test('truncated input is refused', async (t) => {
    const sealed = box.seal(SECRET, context);
    for (const length of [0, 1, 5, 17, HEADER_BYTES - 1, HEADER_BYTES, sealed.length - 1]) {
      const err = thrown(() => box.open(sealed.subarray(0, length), context));
      t.ok(err instanceof SealError, `cut to ${length} bytes`);
    }
    t.match(
      thrown(() => box.open(sealed.subarray(0, HEADER_BYTES - 1), context)),
      { message: /not a sealed value/ },
    );
  });

  t.test('the constructor refuses keys that are not 32 bytes', async (t) => {
    for (const length of [0, 16, 31, 33, 64]) {
      t.throws(() => new SealedBox(randomBytes(length)), /the master key must be 32 bytes/, `${length} bytes`);
    }
  });
});

t.test('keyFingerprint: 4 bytes, stable per key, different across keys', async (t) => {
  const key = randomBytes(32);
  t.equal(keyFingerprint(key).length, 4);
  t.ok(keyFingerprint(key).equals(keyFingerprint(Buffer.from(key))));
  t.notOk(keyFingerprint(key).equals(keyFingerprint(randomBytes(32))));
});

t.test('loadMasterKey', async (t) => {
  t.test('uses MAILPATH_MASTER_KEY when set, and writes nothing', async (t) => {
    const dir = tempDir(t);
    const key = randomBytes(32);
    const config = loadConfig({ MAILPATH_DATA_DIR: dir, MAILPATH_MASTER_KEY: key.toString('hex') });
    const loaded = await loadMasterKey(config);
    t.ok(loaded.equals(key));
    t.throws(() => statSync(join(dir, MASTER_KEY_FILE)), { code: 'ENOENT' }, 'no key file');
  });

  t.test('without it, generates master.key in the data dir once (mode 0600) and reuses it', async (t) => {
    const dir = join(tempDir(t), 'not-yet-created');
    const config = loadConfig({ MAILPATH_DATA_DIR: dir });
    t.equal(config.masterKey, undefined);
    const first = await loadMasterKey(config);
    t.equal(first.length, 32);
    const file = join(dir, MASTER_KEY_FILE);
    t.equal(statSync(file).mode & 0o777, 0o600, 'readable by the owner only');
    t.equal(statSync(dir).mode & 0o777, 0o700, 'in a data dir created private');
    t.match(readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/, 'stored as 64 hex digits');
    const second = await loadMasterKey(loadConfig({ MAILPATH_DATA_DIR: dir }));
    t.ok(second.equals(first), 'the next call (a restart) returns the same key');
    t.equal(readFileSync(file, 'utf8').trim(), first.toString('hex'), 'the file was not rewritten');

    const sealed = new SealedBox(first).seal(SECRET, 'ctx');
    t.equal(new SealedBox(second).open(sealed, 'ctx').toString('utf8'), SECRET, 'what one run sealed the next opens');
  });

  t.test('an unusable key file is an error, not a silently new key', async (t) => {
    const dir = tempDir(t);
    writeFileSync(join(dir, MASTER_KEY_FILE), 'abc\n', { mode: 0o600 });
    await t.rejects(loadMasterKey(loadConfig({ MAILPATH_DATA_DIR: dir })), /master\.key in the data dir does not hold a 32-byte key/);
  });
});

t.test('MAILPATH_MASTER_KEY decoding', async (t) => {
  const dir = tempDir(t);
  const key = randomBytes(32);
  const load = (value: string) => loadConfig({ MAILPATH_DATA_DIR: dir, MAILPATH_MASTER_KEY: value }).masterKey;

  t.ok(load(key.toString('hex'))?.equals(key), '64 hex digits');
  t.ok(load(key.toString('hex').toUpperCase())?.equals(key), '64 upper-case hex digits');
  t.ok(load(` ${key.toString('hex')}\n`)?.equals(key), 'surrounding whitespace ignored');
  t.ok(load(key.toString('base64'))?.equals(key), 'base64 with padding');
  t.ok(load(key.toString('base64').replace(/=$/, ''))?.equals(key), 'base64 without padding');
  t.ok(load(key.toString('base64url'))?.equals(key), 'base64url');
  t.ok(load(key.toString('hex'))?.equals(load(key.toString('base64'))!), 'hex and base64 of one key decode equal');

  const bad = [
    ['31 bytes as hex', randomBytes(31).toString('hex')],
    ['31 bytes as base64', randomBytes(31).toString('base64')],
    ['33 bytes as hex', randomBytes(33).toString('hex')],
    ['33 bytes as base64', randomBytes(33).toString('base64')],
    ['garbage', 'not-a-master-key'],
    ['64 characters, not hex', 'z'.repeat(64)],
    ['base64 with invalid characters', `${key.toString('base64').slice(0, 40)}!!!=`],
  ] as const;
  for (const [what, value] of bad) {
    const err = thrown(() => load(value));
    t.ok(err instanceof ConfigError, `${what}: ConfigError`);
    t.match((err as Error | undefined)?.message, /MAILPATH_MASTER_KEY/, `${what}: names MAILPATH_MASTER_KEY`);
    t.notMatch((err as Error | undefined)?.message ?? '', value.length > 8 ? value : '\u0000', `${what}: does not echo the value`);
  }
});
