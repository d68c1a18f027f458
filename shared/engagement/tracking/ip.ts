// Truncated client addresses for tracking events: an IPv4 address to its /24, an IPv6 address to its /48, so an event names a network, never a person's device.
import { isIPv4, isIPv6 } from 'node:net';

/** The 8 groups of an IPv6 address (an embedded dotted IPv4 tail included), or undefined. */
function ipv6Groups(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const MAPPED_PREFIX = '::ffff:';

/** 203.0.113.77 → 203.0.113.0 (a valid dotted quad). */
function ipv4Network(address: string): string {
  return `${address.slice(0, address.lastIndexOf('.'))}.0`;
}

/**
 * `203.0.113.0` for 203.0.113.77 (/24); `2001:db8:85a3::` for any address in 2001:db8:85a3::/48; an
 * IPv4-mapped IPv6 address (::ffff:203.0.113.77, as a dual-stack listener reports IPv4 clients) as IPv4.
 * Anything else: null (nothing is better than an address that might be whole).
 */
export function truncateIp(address: string | undefined): string | null {
  if (!address) return null;
  if (isIPv4(address)) return ipv4Network(address);
  // A dual-stack listener reports every IPv4 client this way: answered without parsing the IPv6 groups (a profile
  // of the tracking endpoints had the general path at ~4 µs per hit).
  const mappedTail = address.startsWith(MAPPED_PREFIX) ? address.slice(MAPPED_PREFIX.length) : undefined;
  if (mappedTail && isIPv4(mappedTail)) return ipv4Network(mappedTail);
  if (!isIPv6(address)) return null;
  const groups = ipv6Groups(address);
  if (!groups) return null;
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.0`;
  }
  return `${groups
    .slice(0, 3)
    .map((g) => g.toString(16))
    .join(':')}::`;
}
