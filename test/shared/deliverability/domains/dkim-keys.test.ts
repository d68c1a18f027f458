// DKIM keys: generated RSA key format, dated selectors, and private halves sealed in the database and bound to their row.
import t from 'tap';
import { createPublicKey, createSign, createVerify, randomBytes } from 'node:crypto';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import {
  claimSelector,
  generateDkimKey,
  loadSigningKey,
  nextSelector,
  storeKey,
  type GeneratedKey,
} from '../../../../shared/deliverability/domains/dkim-keys.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { SealedBox, SealError } from '../../../../shared/kernel/secrets/sealed-box.js';
import { createTestDatabase } from '../../../helpers/db.js';

const AT = new Date('2030-03-04T05:06:07.000Z');

/** Signs with a PEM private key and checks the signature with a base64 SPKI public key. */
function signsFor(privateKeyPem: string, publicKeyBase64: string): boolean {
  const data = Buffer.from(`DKIM-Signature test ${randomBytes(8).toString('hex')}`);
  const signature = createSign('sha256').update(data).sign(privateKeyPem);
  const publicKey = createPublicKey({ key: Buffer.from(publicKeyBase64, 'base64'), format: 'der', type: 'spki' });
  return createVerify('sha256').update(data).verify(publicKey, signature);
}

t.test('generateDkimKey(2048): base64 SPKI of a 2048-bit RSA key and its PKCS#8 PEM', async (t) => {
  const key = await generateDkimKey(2048);
  t.equal(key.bits, 2048);
  t.match(key.publicKey, /^[A-Za-z0-9+/]+={0,2}$/, 'plain base64, as the p= tag wants');
  const publicKey = createPublicKey({ key: Buffer.from(key.publicKey, 'base64'), format: 'der', type: 'spki' });
  t.equal(publicKey.asymmetricKeyType, 'rsa');
  t.equal(publicKey.asymmetricKeyDetails?.modulusLength, 2048);
  t.equal(Buffer.from(key.publicKey, 'base64').toString('base64'), key.publicKey, 'canonical base64');
  t.match(key.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----\n$/, 'PKCS#8 PEM');
  t.ok(signsFor(key.privateKeyPem, key.publicKey), 'the halves belong together');
  const other = await generateDkimKey(1024);
  t.equal(other.bits, 1024);
  t.equal(
    createPublicKey({ key: Buffer.from(other.publicKey, 'base64'), format: 'der', type: 'spki' }).asymmetricKeyDetails?.modulusLength,
    1024,
    'the size asked for',
  );
});

t.test('nextSelector: prefix and UTC date, then -2, -3...', async (t) => {
  t.equal(nextSelector('mp', AT, []), 'mp20300304');
  t.equal(nextSelector('mp', new Date('2030-03-04T23:59:59.999Z'), []), 'mp20300304', 'the UTC day, late in it');
  t.equal(nextSelector('mp', new Date('2030-03-05T00:00:00.000Z'), []), 'mp20300305', 'the next UTC day at midnight');
  t.equal(nextSelector('mp', new Date('2030-03-04T23:30:00.000-05:00'), []), 'mp20300305', 'an offset time is taken in UTC');
  t.equal(nextSelector('sel', AT, ['mp20300304']), 'sel20300304', 'only exact selectors count as taken');
  t.equal(nextSelector('mp', AT, ['mp20300304']), 'mp20300304-2');
  t.equal(nextSelector('mp', AT, ['mp20300304', 'mp20300304-2']), 'mp20300304-3');
  t.equal(nextSelector('mp', AT, ['mp20300304-2', 'mp20300304']), 'mp20300304-3', 'order of the taken list does not matter');
  t.equal(nextSelector('mp', AT, ['mp20300304', 'mp20300304-3']), 'mp20300304-2', 'a gap is reused');
  t.equal(nextSelector('mp', AT, ['mp20300303', 'mp20300303-2']), 'mp20300304', "another day's selectors do not matter");
});

t.test('claimSelector: the dated selector with a random suffix, so claims of one name never share a DNS host', async (t) => {
  const selectors = Array.from({ length: 50 }, () => claimSelector('mp', AT));
  for (const s of selectors) t.match(s, /^mp20300304-[0-9a-f]{8}$/);
  t.equal(new Set(selectors).size, 50, 'all different');
  t.notOk(selectors.includes(nextSelector('mp', AT, [])), 'never the plain dated selector a rotation of that day takes');
});

t.test('storing and loading sealed private keys', async (t) => {
  const db = await createTestDatabase();
  const sql: Sql = connect(db.url, createLogger('silent'), { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const vault = new SealedBox(randomBytes(32));
  const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug) values ('Keys', 'keys') returning id`;
  const tenantId = tenant!.id;
  const newDomain = async (name: string): Promise<string> => {
    const [row] = await sql<{ id: string }[]>`
      insert into domains (tenant_id, name, unicode_name, created_at) values (${tenantId}, ${name}, ${name}, ${AT}) returning id`;
    return row!.id;
  };
  const sealedOf = async (keyId: string): Promise<Buffer> => {
    const [row] = await sql<{ private_key_sealed: Buffer }[]>`select private_key_sealed from dkim_keys where id = ${keyId}`;
    return row!.private_key_sealed;
  };

  const domainA = await newDomain('a.example');
  const keyA: GeneratedKey = await generateDkimKey(2048);
  const rowA = await storeKey(sql, vault, { tenantId, domainId: domainA, selector: 'mp20300304', key: keyA, state: 'active', at: AT });

  t.test('the row holds the public key in the clear and the private key sealed', async (t) => {
    t.equal(rowA.domain_id, domainA);
    t.equal(rowA.selector, 'mp20300304');
    t.equal(rowA.key_bits, 2048);
    t.equal(rowA.public_key, keyA.publicKey);
    t.equal(rowA.state, 'active');
    t.same(rowA.activated_at, AT, 'an active key is activated at its creation');
    t.notOk('private_key_sealed' in rowA, 'the sealed key is not handed back with the row');
    const sealed = await sealedOf(rowA.id);
    t.ok(Buffer.isBuffer(sealed), 'stored as bytea');
    t.equal(sealed.indexOf('PRIVATE KEY'), -1, "the stored bytes do not contain 'PRIVATE KEY'");
    t.equal(sealed.indexOf(keyA.privateKeyPem.split('\n')[1]!), -1, 'nor a line of the PEM');
    const [text] = await sql<{ t: string }[]>`select encode(private_key_sealed, 'escape') as t from dkim_keys where id = ${rowA.id}`;
    t.notMatch(text!.t, /PRIVATE KEY/, 'nor does its text form in the database');
  });

  t.test('loadSigningKey opens the active key, which signs for the published public key', async (t) => {
    const signing = await loadSigningKey(sql, vault, domainA);
    t.ok(signing);
    t.equal(signing!.selector, 'mp20300304');
    t.equal(signing!.privateKeyPem, keyA.privateKeyPem);
    const [stored] = await sql<{ public_key: string }[]>`select public_key from dkim_keys where id = ${rowA.id}`;
    t.ok(signsFor(signing!.privateKeyPem, stored!.public_key), 'a signature verifies with the stored public key');
  });

  t.test('a domain without an active key has no signing key', async (t) => {
    const domain = await newDomain('pending.example');
    t.equal(await loadSigningKey(sql, vault, domain), undefined, 'no key at all');
    await storeKey(sql, vault, { tenantId, domainId: domain, selector: 'mp20300304', key: await generateDkimKey(1024), state: 'pending', at: AT });
    t.equal(await loadSigningKey(sql, vault, domain), undefined, 'only a pending key');
  });

  t.test('another master key does not open it', async (t) => {
    const otherVault = new SealedBox(randomBytes(32));
    await t.rejects(loadSigningKey(sql, otherVault, domainA), SealError);
    await t.rejects(loadSigningKey(sql, otherVault, domainA), /different master key/);
  });

  t.test('a sealed key copied into another row does not open there', async (t) => {
    // Same selector, another domain: only the domain in the sealing context differs.
    const domainB = await newDomain('b.example');
    const rowB = await storeKey(sql, vault, { tenantId, domainId: domainB, selector: 'mp20300304', key: await generateDkimKey(1024), state: 'active', at: AT });
    t.ok(await loadSigningKey(sql, vault, domainB), "B's own key opens");
    await sql`update dkim_keys set private_key_sealed = ${await sealedOf(rowA.id)} where id = ${rowB.id}`;
    await t.rejects(loadSigningKey(sql, vault, domainB), { name: 'SealError', message: /failed authentication/ }, "A's sealed key in B's row");

    // Same domain, another selector.
    const domainC = await newDomain('c.example');
    const pending = await storeKey(sql, vault, {
      tenantId,
      domainId: domainC,
      selector: 'mp20300304-2',
      key: await generateDkimKey(1024),
      state: 'pending',
      at: AT,
    });
    const active = await storeKey(sql, vault, {
      tenantId,
      domainId: domainC,
      selector: 'mp20300304',
      key: await generateDkimKey(1024),
      state: 'active',
      at: AT,
    });
    await sql`update dkim_keys set private_key_sealed = ${await sealedOf(pending.id)} where id = ${active.id}`;
    await t.rejects(loadSigningKey(sql, vault, domainC), SealError, "another selector's sealed key in the active row");

    t.equal((await loadSigningKey(sql, vault, domainA))!.privateKeyPem, keyA.privateKeyPem, "A's own row still opens");
  });
});
