// Tracking link tokens cannot be forged or replayed: a click token re-signed for another URL, or a token of another purpose or key, names nothing; the
// unsubscribe headers and mailto address.
import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import {
  clickToken,
  legacyClickToken,
  openToken,
  readClickToken,
  readOpenToken,
  readUnsubscribeToken,
  sendIdOfUnsubscribeAddress,
  unsubscribeAddress,
  unsubscribeToken,
} from '../../../../shared/engagement/tracking/link-tokens.js';
import { linkTokenKey, signToken, uuidBytes } from '../../../../shared/engagement/tracking/tokens.js';
import { unsubscribeHeaders, unsubscribeLink } from '../../../../shared/engagement/tracking/unsubscribe.js';

const key = linkTokenKey(randomBytes(32));
const sendId = randomUUID();

const owner = { tenantId: randomUUID(), interstitial: false };

t.test('a click token carries its send, tenant, flags, link count and URL, and nothing else verifies', async (t) => {
  const token = clickToken(key, sendId, 'https://shop.example/sale?id=1', 3, owner);
  t.same(readClickToken(key, token), { sendId, url: 'https://shop.example/sale?id=1', links: 3, tenantId: owner.tenantId, interstitial: false });
  const simulated = clickToken(key, sendId, 'https://shop.example/sale?id=1', 3, { ...owner, interstitial: true });
  t.match(readClickToken(key, simulated), { tenantId: owner.tenantId, interstitial: true });

  const [payload, mac] = token.split('.') as [string, string];
  const bytes = Buffer.from(payload, 'base64url');
  const swapped = Buffer.concat([bytes.subarray(0, 35), Buffer.from('https://evil.example/')]);
  const unflagged = Buffer.from(Buffer.from(simulated.split('.')[0]!, 'base64url'));
  unflagged[32] = 0;
  t.equal(readClickToken(key, `${unflagged.toString('base64url')}.${simulated.split('.')[1]}`), undefined, 'the interstitial flag is signed');
  t.equal(readClickToken(key, `${swapped.toString('base64url')}.${mac}`), undefined, 'another URL under the old signature');
  const otherKey = linkTokenKey(randomBytes(32));
  t.equal(readClickToken(key, clickToken(otherKey, sendId, 'https://evil.example/', 3, owner)), undefined, 're-signed with another key');
  // A forger without our key can only guess MACs: one made with a plain HMAC of the payload (no purpose byte) fails too.
  const naive = createHmac('sha256', key).update(swapped).digest().subarray(0, 16).toString('base64url');
  t.equal(readClickToken(key, `${swapped.toString('base64url')}.${naive}`), undefined, 'a MAC without the purpose');
  const otherSend = clickToken(key, randomUUID(), 'https://shop.example/sale?id=1', 3, owner);
  t.not(otherSend.split('.')[1], mac, 'the send is signed with the URL');
});

t.test('a click link minted before tokens named the tenant still reads: no tenant, no interstitial', async (t) => {
  const legacy = legacyClickToken(key, sendId, 'https://shop.example/sale?id=1', 3);
  t.same(readClickToken(key, legacy), { sendId, url: 'https://shop.example/sale?id=1', links: 3, tenantId: null, interstitial: false });
});

t.test('a token for another purpose names nothing', async (t) => {
  const open = openToken(key, sendId);
  const unsubscribe = unsubscribeToken(key, sendId);
  t.equal(readOpenToken(key, open), sendId);
  t.equal(readUnsubscribeToken(key, unsubscribe), sendId);
  t.equal(readUnsubscribeToken(key, open), undefined, 'an open token does not unsubscribe');
  t.equal(readOpenToken(key, unsubscribe), undefined);
  t.equal(readClickToken(key, open), undefined);
  t.equal(readUnsubscribeToken(key, clickToken(key, sendId, 'https://a.example/', 1, owner)), undefined, 'a click token does not unsubscribe');
  t.equal(readOpenToken(key, signToken(key, 'open', Buffer.concat([uuidBytes(sendId), Buffer.of(1)]))), undefined, 'a payload of the wrong length');
  t.equal(
    readClickToken(key, signToken(key, 'click', Buffer.concat([uuidBytes(sendId), Buffer.of(0, 1), Buffer.from('javascript:alert(1)')]))),
    undefined,
    'only http(s) destinations',
  );
});

t.test('unsubscribe headers: an https link and a mailto address with the same token, and RFC 8058 one-click', async (t) => {
  const publicUrl = new URL('https://mail.example.net');
  const headers = unsubscribeHeaders({ sendId, linkKey: key, publicUrl, hostname: 'mx.example.net' });
  const token = unsubscribeToken(key, sendId);
  t.same(headers, {
    'List-Unsubscribe': `<https://mail.example.net/u/${token}>, <mailto:u-${token}@mx.example.net>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  });
  t.equal(unsubscribeLink({ sendId, linkKey: key, publicUrl }), `https://mail.example.net/u/${token}`);
  const address = unsubscribeAddress(key, sendId, 'mx.example.net');
  t.ok(address.split('@')[0]!.length <= 64, 'the local part fits RFC 5321');
  t.equal(sendIdOfUnsubscribeAddress(key, address, 'mx.example.net'), sendId);
  t.equal(sendIdOfUnsubscribeAddress(key, address.replace('@mx.example.net', '@MX.Example.NET'), 'mx.example.net'), sendId, 'domain in any case');
  t.equal(sendIdOfUnsubscribeAddress(key, address, 'other.example'), undefined, 'another host');
  t.equal(sendIdOfUnsubscribeAddress(key, address.toLowerCase(), 'mx.example.net'), undefined, 'a mangled token');
  t.equal(sendIdOfUnsubscribeAddress(key, `x${address}`, 'mx.example.net'), undefined);
  t.equal(sendIdOfUnsubscribeAddress(key, `u-${openToken(key, sendId)}@mx.example.net`, 'mx.example.net'), undefined, 'an open token');
});
