// Which mailbox provider (ESP) a recipient's mail lands at, from the recipient domain alone: for warm-up sub-caps and analytics.

/** The providers the spec names; everything else is `other`. */
export const MAILBOX_PROVIDERS = ['gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'other'] as const;
export type MailboxProvider = (typeof MAILBOX_PROVIDERS)[number];

/**
 * The consumer domains of each provider. Only the domain is looked at (no MX look-up), so a company
 * domain hosted at Google Workspace or Microsoft 365 counts as `other`: that keeps the classification
 * free and deterministic on the send path.
 */
const DOMAINS: Record<Exclude<MailboxProvider, 'other'>, readonly string[]> = {
  gmail: ['gmail.com', 'googlemail.com'],
  outlook: [
    'outlook.com',
    'hotmail.com',
    'live.com',
    'msn.com',
    'passport.com',
    'outlook.fr',
    'outlook.de',
    'hotmail.co.uk',
    'hotmail.fr',
    'hotmail.de',
    'hotmail.it',
    'hotmail.es',
    'live.co.uk',
    'live.fr',
    'live.de',
    'windowslive.com',
  ],
  yahoo: [
    'yahoo.com',
    'ymail.com',
    'rocketmail.com',
    'yahoo.co.uk',
    'yahoo.fr',
    'yahoo.de',
    'yahoo.it',
    'yahoo.es',
    'yahoo.ca',
    'yahoo.co.jp',
    'yahoo.com.br',
    'yahoo.co.in',
  ],
  aol: ['aol.com', 'aim.com', 'aol.co.uk', 'aol.fr', 'aol.de'],
  icloud: ['icloud.com', 'me.com', 'mac.com'],
  proton: ['proton.me', 'protonmail.com', 'protonmail.ch', 'pm.me'],
  fastmail: ['fastmail.com', 'fastmail.fm', 'fastmail.net', 'fastmail.org', 'fastmail.to', 'fastmail.us', 'messagingengine.com'],
};

const BY_DOMAIN = new Map<string, MailboxProvider>(
  Object.entries(DOMAINS).flatMap(([provider, domains]) => domains.map((d) => [d, provider as MailboxProvider] as const)),
);

/** The provider of a recipient domain (case and a trailing dot ignored). */
export function providerOfDomain(domain: string): MailboxProvider {
  return BY_DOMAIN.get(domain.trim().toLowerCase().replace(/\.$/, '')) ?? 'other';
}

/** The provider of a recipient address, by the domain after its last @. */
export function providerOfAddress(address: string): MailboxProvider {
  const at = address.lastIndexOf('@');
  return at < 0 ? 'other' : providerOfDomain(address.slice(at + 1));
}

/**
 * The mail hosts of each provider, as suffixes of an MX host name: a custom domain hosted at Google Workspace,
 * Microsoft 365, Yahoo (which also runs AOL's mail), iCloud+, Proton or Fastmail points its MX at these. Used
 * where a look-up is affordable (analytics, the delivery path, which knows the host it reached).
 */
const MX_SUFFIXES: readonly (readonly [string, Exclude<MailboxProvider, 'other'>])[] = [
  ['google.com', 'gmail'],
  ['googlemail.com', 'gmail'],
  ['outlook.com', 'outlook'],
  ['hotmail.com', 'outlook'],
  ['yahoodns.net', 'yahoo'],
  ['yahoo.com', 'yahoo'],
  ['aol.com', 'aol'],
  ['icloud.com', 'icloud'],
  ['me.com', 'icloud'],
  ['protonmail.ch', 'proton'],
  ['proton.me', 'proton'],
  ['messagingengine.com', 'fastmail'],
  ['fastmail.com', 'fastmail'],
];

/** The provider running an MX host (gmail-smtp-in.l.google.com → gmail), by its name's suffix; `other` when unknown. */
export function providerOfMxHost(host: string): MailboxProvider {
  const name = host.trim().toLowerCase().replace(/\.$/, '');
  for (const [suffix, provider] of MX_SUFFIXES) if (name === suffix || name.endsWith(`.${suffix}`)) return provider;
  return 'other';
}
