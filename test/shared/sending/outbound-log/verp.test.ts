// VERP bounce addresses: round trip to the send id; foreign hosts, malformed and forged addresses map to nothing.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { bounceAddress, sendIdOfBounce, verpKey } from '../../../../shared/sending/outbound-log/verp.js';

const key = verpKey(randomBytes(32));
const host = 'mx.mailpath.test';

t.test('round trip', async (t) => {
  for (let i = 0; i < 20; i++) {
    const id = randomUUID();
    const address = bounceAddress(key, id, host);
    t.match(address, /^b-[0-9a-f]{32}-[0-9a-f]{10}@mx\.mailpath\.test$/);
    t.ok(address.split('@')[0]!.length <= 64, 'a valid local part');
    t.equal(sendIdOfBounce(key, address, host), id);
    t.equal(sendIdOfBounce(key, address.toUpperCase(), host), id, 'case-insensitive (some servers upper-case)');
  }
});

t.test('what is not ours maps to nothing', async (t) => {
  const id = randomUUID();
  const address = bounceAddress(key, id, host);
  t.equal(sendIdOfBounce(key, address.replace(host, 'other.test'), host), undefined, 'another host');
  t.equal(sendIdOfBounce(verpKey(randomBytes(32)), address, host), undefined, 'another key');
  const [local] = address.split('@');
  const forged = `${local!.slice(0, -1)}${local!.endsWith('0') ? '1' : '0'}@${host}`;
  t.equal(sendIdOfBounce(key, forged, host), undefined, 'a wrong signature');
  const otherId = randomUUID().replace(/-/g, '');
  t.equal(sendIdOfBounce(key, `b-${otherId}-${local!.slice(-10)}@${host}`, host), undefined, 'a signature moved to another id');
  for (const bad of ['', 'postmaster@mx.mailpath.test', 'b-xyz-123@mx.mailpath.test', `${address} trailing`]) {
    t.equal(sendIdOfBounce(key, bad, host), undefined, JSON.stringify(bad));
  }
});
