// The dev DNS server with its zone: *.localhost only, loopback addresses, exactly the records Mailpath asks to publish (DKIM for every key in use), read at
// each question, so a domain verifies through the real code path.
import { Resolver } from 'node:dns/promises';
import t from 'tap';
import { startDevDns } from '../../../main/dev/dns.js';
import { devZone } from '../../../main/dev/zone.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';
import { freePort } from '../../helpers/net.js';

const port = await freePort();
let open = true;
const { app, ctx, sql, config } = await buildTestApp(t, {
  env: { MAILPATH_DNS_SERVERS: `127.0.0.1:${port}`, MAILPATH_HOSTNAME: 'mx.mailpath.localhost' },
});
const dns = await startDevDns(
  devZone(config, () => (open ? sql : undefined)),
  port,
  createLogger('silent'),
);
t.teardown(() => dns.stop());

const resolver = new Resolver({ timeout: 2000, tries: 1 });
resolver.setServers([dns.address]);
const txt = async (name: string) => (await resolver.resolveTxt(name)).map((strings) => strings.join('')).sort();
const failure = (p: Promise<unknown>) =>
  p.then(
    () => 'answered',
    (err: { code?: string }) => err.code,
  );

t.test('a domain added under .localhost: its records as listed, DKIM for each key still in use, and it verifies', async (t) => {
  const tenant = await registerTenant(app);
  const added = await call(app, 'POST', '/domains', { token: tenant.token, body: { name: 'Shop.Acme.localhost' } });
  t.equal(added.status, 201);
  const records = added.body.data.records as { kind: string; host: string; value: string }[];
  const value = (kind: string) => records.find((r) => r.kind === kind)!;
  t.same(await txt('shop.acme.localhost'), [value('spf').value]);
  t.same(await txt('_dmarc.shop.acme.localhost'), [value('dmarc').value]);
  t.same(await resolver.resolveMx('shop.acme.localhost'), [{ exchange: 'mx.mailpath.localhost', priority: 10 }]);
  t.ok(value('dkim').value.length > 255, 'a 2048-bit key: longer than one TXT string');
  t.same(await txt(value('dkim').host), [value('dkim').value], 'the DKIM record, split into strings on the wire, joined back whole');
  t.same(await resolver.resolve4('shop.acme.localhost'), ['127.0.0.1']);
  t.same(await resolver.resolve6('shop.acme.localhost'), ['::1']);

  const verified = await call(app, 'POST', `/domains/${added.body.data.id}/verify`, { token: tenant.token });
  t.equal(verified.body.data.status, 'verified', 'the real verification, against this server');

  // A rotation's new key is published at once; the signing key stays; a retired key is gone.
  const rotation = await call(app, 'POST', `/domains/${added.body.data.id}/dkim/rotate`, { token: tenant.token, body: {} });
  t.equal(rotation.status, 202);
  const newRecord = rotation.body.data.dns_record as { host: string; value: string };
  t.same(await txt(newRecord.host), [newRecord.value], "the rotation's new key");
  t.same(await txt(value('dkim').host), [value('dkim').value], 'the signing key is still there');
  await sql`update dkim_keys set state = 'retired' where public_key = ${value('dkim').value.replace(/^.*p=/, '')}`;
  t.equal(await failure(resolver.resolveTxt(value('dkim').host)), 'ENODATA', 'a retired key is no longer published');
});

t.test('only .localhost names exist; the SPF include host lists this machine; nothing before the database is open', async (t) => {
  t.equal(await failure(resolver.resolveTxt('example.org')), 'ENOTFOUND', 'a real domain is never answered: NXDOMAIN');
  t.equal(await failure(resolver.resolve4('mx.mailpath.local')), 'ENOTFOUND');
  t.equal(await failure(resolver.resolveTxt('nothing-here.localhost')), 'ENODATA', 'a .localhost name exists, without TXT records');
  t.same(await resolver.resolve4('mx.mailpath.localhost'), ['127.0.0.1']);
  t.same(await txt(ctx.config.spfInclude), ['v=spf1 ip4:127.0.0.1 ip6:::1 -all']);
  open = false;
  t.teardown(() => {
    open = true;
  });
  t.equal(await failure(resolver.resolveTxt('shop.acme.localhost')), 'ESERVFAIL', 'SERVFAIL: a failed look-up, which proves nothing');
});
