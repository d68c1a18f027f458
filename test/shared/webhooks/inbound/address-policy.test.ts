// Which addresses a webhook may reach: every private, loopback, link-local, CGNAT, multicast, reserved and unspecified range is refused, in v4, v6 and
// v4-inside-v6 forms.
import t from 'tap';
import { forbiddenAddressReason } from '../../../../shared/webhooks/inbound/address-policy.js';

t.test('IPv4: internal and special ranges are refused, each named', async (t) => {
  const cases: [string, RegExp][] = [
    ['0.0.0.0', /unspecified/],
    ['0.1.2.3', /unspecified/],
    ['10.0.0.1', /private/],
    ['10.255.255.255', /private/],
    ['100.64.0.1', /CGNAT/],
    ['100.127.255.254', /CGNAT/],
    ['127.0.0.1', /loopback/],
    ['127.8.9.10', /loopback/],
    ['169.254.169.254', /link-local/],
    ['172.16.0.1', /private/],
    ['172.31.255.255', /private/],
    ['192.168.1.1', /private/],
    ['192.0.0.8', /IETF/],
    ['198.18.0.1', /benchmarking/],
    ['224.0.0.1', /multicast/],
    ['239.255.255.250', /multicast/],
    ['240.0.0.1', /reserved/],
    ['255.255.255.255', /reserved/],
  ];
  for (const [address, reason] of cases) t.match(forbiddenAddressReason(address), reason, address);
});

t.test('IPv4: public addresses, including the neighbours of refused ranges, are allowed', async (t) => {
  for (const address of [
    '1.1.1.1',
    '8.8.8.8',
    '93.184.216.34',
    '9.255.255.255',
    '11.0.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '172.15.255.255',
    '172.32.0.0',
    '192.167.255.255',
    '192.169.0.0',
    '223.255.255.255',
  ]) {
    t.equal(forbiddenAddressReason(address), undefined, address);
  }
});

t.test('IPv6: unspecified, loopback, unique local, link-local, site-local, multicast are refused', async (t) => {
  const cases: [string, RegExp][] = [
    ['::', /unspecified/],
    ['::1', /loopback/],
    ['0:0:0:0:0:0:0:1', /loopback/],
    ['fc00::1', /unique local/],
    ['fd12:3456:789a::1', /unique local/],
    ['fe80::1', /link-local/],
    ['fe80::1%eth0', /link-local/],
    ['febf::1', /link-local/],
    ['fec0::1', /site-local/],
    ['ff02::1', /multicast/],
    ['64:ff9b:1::1', /NAT64/],
    ['100::1', /discard/],
  ];
  for (const [address, reason] of cases) t.match(forbiddenAddressReason(address), reason, address);
});

t.test('an IPv4 address inside IPv6 is judged as the IPv4 address it reaches (named by its class, not the address)', async (t) => {
  const cases: [string, RegExp][] = [
    ['::ffff:127.0.0.1', /^loopback \(IPv4 inside IPv6\)$/],
    ['::ffff:7f00:1', /^loopback \(IPv4 inside IPv6\)$/],
    ['::FFFF:10.0.0.1', /private/],
    ['0:0:0:0:0:ffff:a9fe:a9fe', /^link-local \(IPv4 inside IPv6\)$/],
    ['::10.0.0.1', /private/],
    ['64:ff9b::127.0.0.1', /loopback/],
    ['64:ff9b::c0a8:101', /^private \(IPv4 inside IPv6\)$/],
    ['2002:7f00:1::1', /^loopback \(IPv4 inside IPv6\)$/],
    ['2002:a00:1::', /private/],
  ];
  for (const [address, reason] of cases) t.match(forbiddenAddressReason(address), reason, address);
  for (const address of ['::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1']) t.equal(forbiddenAddressReason(address), undefined, address);
});

t.test('public IPv6 is allowed; what is not an address is refused', async (t) => {
  for (const address of ['2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450:4001:82a::200e'])
    t.equal(forbiddenAddressReason(address), undefined, address);
  for (const address of ['', 'localhost', 'example.com', '1.2.3', '::g', '1.2.3.4.5'])
    t.equal(forbiddenAddressReason(address), 'not an IP address', JSON.stringify(address));
});
