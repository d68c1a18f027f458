// Mailbox provider classification from the recipient domain (shared/deliverability/mailbox-providers.ts), used by the per-ESP sub-caps and analytics.
import t from 'tap';
import { MAILBOX_PROVIDERS, providerOfAddress, providerOfDomain } from '../../../shared/deliverability/mailbox-providers.js';

t.test('consumer domains map to their provider; everything else is other', async (t) => {
  t.same([...MAILBOX_PROVIDERS], ['gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'other']);
  const cases: [string, string][] = [
    ['a@gmail.com', 'gmail'],
    ['a@GoogleMail.com', 'gmail'],
    ['a@hotmail.co.uk', 'outlook'],
    ['a@live.com', 'outlook'],
    ['a@outlook.com', 'outlook'],
    ['a@ymail.com', 'yahoo'],
    ['a@yahoo.co.jp', 'yahoo'],
    ['a@aol.com', 'aol'],
    ['a@me.com', 'icloud'],
    ['a@icloud.com', 'icloud'],
    ['a@pm.me', 'proton'],
    ['a@protonmail.com', 'proton'],
    ['a@fastmail.fm', 'fastmail'],
    ['a@company.example', 'other'],
    ['a@mail.gmail.com', 'other'],
    ['"odd@name"@gmail.com', 'gmail'],
    ['no-at-sign', 'other'],
  ];
  for (const [address, provider] of cases) t.equal(providerOfAddress(address), provider, address);
  t.equal(providerOfDomain('GMAIL.COM.'), 'gmail', 'case and a trailing dot ignored');
});
