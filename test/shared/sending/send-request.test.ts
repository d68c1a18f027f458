// Custom headers of a send: every reserved identity, routing, trace and authentication field is refused by name, in any case; ordinary ones pass.
import t from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import { checkHeaders, isReservedHeader } from '../../../shared/sending/send-request.js';

const limits = loadConfig({}).limits.send;

/** Each one could forge who sent the message, where replies, receipts or bounces go, or what a verifier found. */
const RESERVED = [
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'Subject',
  'Date',
  'Message-ID',
  'MIME-Version',
  'Content-Type',
  'Content-Transfer-Encoding',
  'Content-Disposition',
  'Content-ID',
  'Resent-From',
  'Resent-Sender',
  'Resent-To',
  'Resent-Cc',
  'Resent-Bcc',
  'Resent-Date',
  'Resent-Message-ID',
  'Resent-Reply-To',
  'Errors-To',
  'Disposition-Notification-To',
  'Disposition-Notification-Options',
  'Original-Recipient',
  'Return-Receipt-To',
  'Return-Path',
  'Delivered-To',
  'X-Original-To',
  'Envelope-To',
  'Received',
  'Authentication-Results',
  'Received-SPF',
  'DKIM-Signature',
  'DomainKey-Signature',
  'ARC-Seal',
  'ARC-Message-Signature',
  'ARC-Authentication-Results',
  'ARC-Anything',
  'List-Unsubscribe',
  'List-Unsubscribe-Post',
];

const variants = (name: string) => [name, name.toLowerCase(), name.toUpperCase()];

for (const reserved of RESERVED) {
  t.test(`${reserved} is refused, in any case, with 422 naming the header`, async (t) => {
    for (const name of variants(reserved)) {
      t.ok(isReservedHeader(name), name);
      t.throws(() => checkHeaders({ 'X-Fine': 'ok', [name]: 'someone@evil.example' }, limits), {
        name: 'AppError',
        slug: 'validation_error',
        message: new RegExp(`^headers\\.${name.replace(/[-]/g, '\\-')}: is reserved`),
      });
    }
  });
}

t.test('ordinary custom headers pass untouched', async (t) => {
  const headers = {
    'X-Order': '42',
    'In-Reply-To': '<a@b.example>',
    References: '<a@b.example>',
    'List-Id': 'News <news.shop.example>',
    'Auto-Submitted': 'auto-generated',
    'X-Resent-Note': 'not a Resent- field',
    'Senders-Note': 'x',
  };
  t.same(checkHeaders(headers, limits), headers);
  for (const name of Object.keys(headers)) t.notOk(isReservedHeader(name), name);
});
