// Link tokens: round trip, one purpose only, one key only, no tampering, canonical encoding, URL- and local-part-safe.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { linkTokenKey, signToken, uuidAt, uuidBytes, verifyToken } from '../../../../shared/engagement/tracking/tokens.js';

const key = linkTokenKey(randomBytes(32));

t.test('a token carries its payload back, for its purpose and key only', async (t) => {
  const id = randomUUID();
  const token = signToken(key, 'unsubscribe', uuidBytes(id));
  t.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/, 'base64url halves, one dot');
  t.equal(uuidAt(verifyToken(key, 'unsubscribe', token)!), id);
  t.equal(verifyToken(key, 'click', token), undefined, 'not for another purpose');
  t.equal(verifyToken(linkTokenKey(randomBytes(32)), 'unsubscribe', token), undefined, 'not with another key');
});

t.test('tampering, truncation and odd encodings are refused', async (t) => {
  const payload = Buffer.from('https://example.com/a?b=1');
  const token = signToken(key, 'click', payload);
  const [data, sig] = token.split('.') as [string, string];
  const flipped = Buffer.from(data, 'base64url');
  flipped[0] = flipped[0]! ^ 1;
  for (const bad of [
    `${flipped.toString('base64url')}.${sig}`,
    `${data}.${sig.slice(0, -1)}`,
    `${data}.${sig}x`,
    `${data}=.${sig}`,
    `${data}`,
    '',
    `${data}.${sig}.${sig}`,
  ]) {
    t.equal(verifyToken(key, 'click', bad), undefined, JSON.stringify(bad).slice(0, 40));
  }
  t.same(verifyToken(key, 'click', token), payload);
});

t.test('one spelling per token: a MAC whose last character differs only in its unused bits is refused', async (t) => {
  const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const token = signToken(key, 'unsubscribe', uuidBytes(randomUUID()));
  const last = ALPHABET.indexOf(token.at(-1)!);
  // The 22nd character of 16 bytes carries 2 bits (its top ones); the other three with the same top bits decode alike.
  const aliases = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((low) => ALPHABET[(last & 0b110000) | low]!).filter((c) => c !== token.at(-1));
  t.equal(aliases.length, 15);
  for (const c of aliases) {
    const alias = `${token.slice(0, -1)}${c}`;
    t.same(Buffer.from(alias.split('.')[1]!, 'base64url'), Buffer.from(token.split('.')[1]!, 'base64url'), `${c} decodes to the same MAC`);
    t.equal(verifyToken(key, 'unsubscribe', alias), undefined, `${c}: refused`);
  }
  t.ok(verifyToken(key, 'unsubscribe', token), 'the canonical spelling verifies');
});
