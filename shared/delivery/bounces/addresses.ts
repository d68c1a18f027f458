// Addresses and Message-IDs as reports write them ("rfc822; <ann@example.org>", "Ann <ann@example.org>", "<id@host>"), reduced to what sends store.

const IN_BRACKETS = /<([^<>\s"]+@[^<>\s"]+)>/;
const BARE = /[^\s<>"'(),;:[\]]+@[^\s<>"'(),;:[\]]+/;

/** The first address in `value`, lower-cased (sends store normalized addresses), or undefined. */
export function bareAddress(value: string | null | undefined): string | undefined {
  if (!value) return undefined;
  const found = IN_BRACKETS.exec(value)?.[1] ?? BARE.exec(value)?.[0];
  // A sentence may end right after the address ("… to ann@example.org.").
  return found?.replace(/\.+$/, '').toLowerCase() || undefined;
}

/** A Message-ID without its angle brackets, or undefined when there is none. */
export function bareMessageId(value: string | null | undefined): string | undefined {
  const id = value?.trim().replace(/^<|>$/g, '').trim();
  return id ? id : undefined;
}

/**
 * Whether an address has the shape of one of our VERP bounce addresses (b-<send id>-<signature>
 * at the mail host), whatever its signature: such mail maps by its signature or not at all.
 */
export function looksLikeVerp(address: string, mailHost: string): boolean {
  const match = /^b-[0-9a-f]{32}-[0-9a-f]+@(.+)$/i.exec(address.trim());
  return match !== null && match[1]!.toLowerCase() === mailHost.toLowerCase();
}
