// Which IP addresses a webhook may never reach: private, loopback, link-local, CGNAT, multicast, reserved, unspecified (v4 and v6).
import { BlockList, isIP, isIPv4 } from 'node:net';

/** [network, prefix length, what it is], checked in order; the name ends up in the refusal message. */
const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'unspecified ("this network")'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'shared CGNAT'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignment'],
  ['192.0.2.0', 24, 'documentation'],
  ['192.88.99.0', 24, '6to4 relay anycast'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'],
  ['203.0.113.0', 24, 'documentation'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved (and broadcast)'],
];

const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'],
  ['::1', 128, 'loopback'],
  ['100::', 64, 'discard-only'],
  ['64:ff9b:1::', 48, 'local-use NAT64'],
  ['2001:db8::', 32, 'documentation'],
  ['fc00::', 7, 'unique local (private)'],
  ['fe80::', 10, 'link-local'],
  ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
];

const v4Lists = V4_RANGES.map(([net, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv4');
  return { list, what };
});
const v6Lists = V6_RANGES.map(([net, prefix, what]) => {
  const list = new BlockList();
  list.addSubnet(net, prefix, 'ipv6');
  return { list, what };
});

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad included), or undefined when it is not one. */
function v6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.toLowerCase().replace(/%.*$/, '');
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad[1]!.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, -quad[1]!.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const missing = 8 - left.length - right.length;
  const groups = [...left, ...(tail === undefined ? [] : Array<string>(missing).fill('0')), ...right].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4Of = (high: number, low: number) => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/**
 * The IPv4 address an IPv6 address carries and that the connection would really reach:
 * IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedV4(groups: number[]): string | undefined {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [number, number, number, number, number, number, number, number];
  const zeroTo4 = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0;
  if (zeroTo4 && (g5 === 0xffff || g5 === 0) && !(g5 === 0 && g6 === 0)) return v4Of(g6, g7);
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return v4Of(g6, g7);
  if (g0 === 0x2002) return v4Of(g1, g2);
  return undefined;
}

/**
 * Why a webhook may not connect to `address`: the class of address (e.g. "loopback"), never the address
 * itself; undefined when it may.
 * Anything that is not an IP address at all is refused too.
 */
export function forbiddenAddressReason(address: string): string | undefined {
  if (isIPv4(address)) return v4Lists.find((r) => r.list.check(address, 'ipv4'))?.what;
  const groups = v6Groups(address);
  if (!groups) return 'not an IP address';
  const v4 = embeddedV4(groups);
  if (v4 !== undefined) {
    const inner = forbiddenAddressReason(v4);
    // The class only, never the address: a message naming what a host resolves to would be a DNS oracle.
    if (inner !== undefined) return `${inner} (IPv4 inside IPv6)`;
  }
  const normal = groups.map((g) => g.toString(16)).join(':');
  return v6Lists.find((r) => r.list.check(normal, 'ipv6'))?.what;
}
