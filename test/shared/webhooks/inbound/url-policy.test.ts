// The webhook URL policy: https only, no credentials, and a host resolving (through the injectable resolver) only to public addresses.
import t from 'tap';
import { createResolver } from '../../../../shared/kernel/dns.js';
import { checkWebhookUrl, parseWebhookUrl } from '../../../../shared/webhooks/inbound/url-policy.js';
import { startDnsServer } from '../../../helpers/dns-server.js';

const strict = { allow_http: false, allow_private_addresses: false };

t.test('syntax and scheme: https only unless http is allowed; no credentials; bounded length', async (t) => {
  t.equal(parseWebhookUrl('https://hooks.example.com/inbound?x=1', strict).href, 'https://hooks.example.com/inbound?x=1');
  const refused: [string, RegExp][] = [
    ['http://hooks.example.com/', /must be an https:\/\/ URL/],
    ['ftp://hooks.example.com/', /https/],
    ['javascript:alert(1)', /https/],
    ['hooks.example.com/inbound', /absolute URL/],
    ['/relative', /absolute URL/],
    ['', /absolute URL/],
    ['https://user:pass@hooks.example.com/', /user name or password/],
    ['https://token@hooks.example.com/', /user name or password/],
    ['https://hooks.example.com/a b', /spaces or control/],
    ['https://hooks.example.com/\r\nX: y', /spaces or control/],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, /longer than 2048/],
  ];
  for (const [url, reason] of refused)
    t.throws(() => parseWebhookUrl(url, strict), { name: 'UrlPolicyError', message: reason }, JSON.stringify(url.slice(0, 60)));
  t.equal(parseWebhookUrl('http://hooks.example.com/', { ...strict, allow_http: true }).protocol, 'http:', 'allow_http admits http');
  t.throws(() => parseWebhookUrl('ftp://x.example/', { ...strict, allow_http: true }), { message: /http:\/\/ or https:\/\// });
});

t.test('an IP literal is checked without a look-up, in every spelling', async (t) => {
  const dns = { txt: async () => [], mx: async () => [], addresses: async () => t.fail('no look-up for a literal') as never };
  for (const url of [
    'https://127.0.0.1/',
    'https://10.0.0.1:8443/x',
    'https://[::1]/',
    'https://[::ffff:127.0.0.1]/',
    'https://[fe80::1]/',
    'https://0x7f.1/',
    'https://2130706433/',
    'https://169.254.169.254/latest/meta-data',
  ]) {
    await t.rejects(checkWebhookUrl(url, strict, dns), { name: 'UrlPolicyError', message: /which webhooks may not reach/ }, url);
  }
  const ok = await checkWebhookUrl('https://93.184.216.34/hook', strict, dns);
  t.match(ok, { host: '93.184.216.34', address: '93.184.216.34', family: 4 });
  const v6 = await checkWebhookUrl('https://[2606:4700:4700::1111]/hook', strict, dns);
  t.match(v6, { host: '2606:4700:4700::1111', family: 6 });
  t.match(
    await checkWebhookUrl('http://127.0.0.1:9/', { allow_http: true, allow_private_addresses: true }, dns),
    { address: '127.0.0.1' },
    'both allowances: loopback http is fine',
  );
});

t.test('names resolving to private, loopback or mapped addresses are refused; public ones pass and are pinned', async (t) => {
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], { timeoutMs: 1000, tries: 1 });
  server.setA('private.hooks.test', ['10.0.0.1']);
  server.setA('loopback.hooks.test', ['127.0.0.1']);
  server.setA('v6-loopback.hooks.test', ['::1']);
  server.setA('mapped.hooks.test', ['::ffff:7f00:1']);
  server.setA('cgnat.hooks.test', ['100.64.1.1']);
  server.setA('mixed.hooks.test', ['93.184.216.34', '192.168.0.10']);
  server.setA('public.hooks.test', ['2606:4700:4700::1111', '93.184.216.34']);
  // The message names the class of address, never the address: no DNS oracle for internal names.
  const refused: [string, string][] = [
    ['private.hooks.test', 'host private.hooks.test resolves to a private address, which webhooks may not reach'],
    ['loopback.hooks.test', 'host loopback.hooks.test resolves to a loopback address, which webhooks may not reach'],
    ['v6-loopback.hooks.test', 'host v6-loopback.hooks.test resolves to a loopback address, which webhooks may not reach'],
    ['mapped.hooks.test', 'host mapped.hooks.test resolves to a loopback (IPv4 inside IPv6) address, which webhooks may not reach'],
    ['cgnat.hooks.test', 'host cgnat.hooks.test resolves to a shared CGNAT address, which webhooks may not reach'],
    ['mixed.hooks.test', 'host mixed.hooks.test resolves to a private address, which webhooks may not reach'],
    ['nothing.hooks.test', 'host nothing.hooks.test does not resolve to any address'],
  ];
  for (const [host, message] of refused) {
    await t.rejects(checkWebhookUrl(`https://${host}/inbound`, strict, dns), { name: 'UrlPolicyError', message }, host);
  }
  server.setA('unspecified.hooks.test', ['0.0.0.0']);
  await t.rejects(
    checkWebhookUrl('https://unspecified.hooks.test/', strict, dns),
    { message: /resolves to an unspecified \("this network"\) address, which/ },
    '"an" before a vowel',
  );
  const pinned = await checkWebhookUrl('https://public.hooks.test/inbound', strict, dns);
  t.match(pinned, { host: 'public.hooks.test', address: '93.184.216.34', family: 4 }, 'IPv4 preferred');
  t.equal(pinned.url.href, 'https://public.hooks.test/inbound');

  const open = { allow_http: false, allow_private_addresses: true };
  t.match(await checkWebhookUrl('https://loopback.hooks.test/', open, dns), { address: '127.0.0.1' }, 'allow_private_addresses admits them');

  server.setMode('servfail');
  await t.rejects(
    checkWebhookUrl('https://public.hooks.test/', strict, dns),
    { name: 'UrlPolicyError', message: /could not be resolved \(ESERVFAIL\)/ },
    'a failed look-up refuses, it never passes',
  );
});
